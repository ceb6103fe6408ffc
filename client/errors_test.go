package client

import (
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestBrokerErrorRetriable: a send is retried on another broker exactly
// for the codes remoting/protocol's table marks retriable (Java's
// producer's retryResponseCodes).
func TestBrokerErrorRetriable(t *testing.T) {
	for code, want := range map[int16]bool{
		protocol.RespSystemError: true, protocol.RespServiceNotAvailable: true, protocol.RespNoPermission: true,
		protocol.RespTopicNotExist: true, protocol.RespMessageIllegal: false, protocol.RespInvalidParameter: false,
	} {
		e := &BrokerError{Op: "send", Code: code}
		if e.Retriable() != want {
			t.Errorf("%s: retriable %v, want %v", protocol.ResponseCodeName(code), e.Retriable(), want)
		}
	}
	if !errors.Is(&BrokerError{Code: protocol.RespTopicNotExist}, ErrTopicNotExist) {
		t.Fatal("TOPIC_NOT_EXIST is not ErrTopicNotExist")
	}
}
