package admin

import (
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestResponseErrorReadsTheCodeTable: what a code means and whether it is
// retriable come from remoting/protocol's one table, as our client's
// BrokerError reads them.
func TestResponseErrorReadsTheCodeTable(t *testing.T) {
	e := &ResponseError{Op: "create topic", Node: "broker b", Code: protocol.RespServiceNotAvailable, Remark: "disk full"}
	if !e.Retriable() || e.Meaning() != protocol.ResponseCodeOf(protocol.RespServiceNotAvailable).Meaning {
		t.Fatalf("SERVICE_NOT_AVAILABLE: retriable %v, meaning %q", e.Retriable(), e.Meaning())
	}
	e = &ResponseError{Code: protocol.RespMessageIllegal}
	if e.Retriable() {
		t.Fatal("MESSAGE_ILLEGAL is retriable")
	}
	if !errors.Is(&ResponseError{Code: protocol.RespTopicNotExist}, ErrNotFound) {
		t.Fatal("TOPIC_NOT_EXIST is not ErrNotFound")
	}
}
