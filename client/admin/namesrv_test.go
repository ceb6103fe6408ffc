package admin

import (
	"context"
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestNamesrvStatesAsksEveryNameServer(t *testing.T) {
	up, refusing := startFake(t), startFake(t)
	up.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSuccess, nil,
		clusterBody("C", map[string]string{"broker-a": "10.0.0.1:10911", "broker-b": "10.0.0.2:10911"}))
	refusing.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSystemError, nil, nil)
	a := newAdmin(t, up.addr(), refusing.addr(), "127.0.0.1:1")
	got := a.NamesrvStates(context.Background())
	if len(got) != 3 || got[0].Err != nil || got[0].Brokers != 2 || got[0].Addr != up.addr() {
		t.Fatalf("states %+v", got)
	}
	var re *ResponseError
	if !errors.As(got[1].Err, &re) || re.Code != protocol.RespSystemError {
		t.Fatalf("refusing name server: %v", got[1].Err)
	}
	var ce *CallError
	if !errors.As(got[2].Err, &ce) || ce.Addr != "127.0.0.1:1" {
		t.Fatalf("closed port: %v", got[2].Err)
	}
}
