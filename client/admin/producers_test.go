package admin

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestAllProducersMergesBrokersAndSaysWhenUnsupported(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ba.reply(protocol.ReqGetAllProducerInfo, protocol.RespSuccess, nil,
		[]byte(`{"data":{"pg-1":[{"clientId":"c2","remoteIP":"10.0.0.2:5000","language":"JAVA","version":475,"lastUpdateTimestamp":1}],
		"pg-0":[{"clientId":"c1","remoteIP":"10.0.0.1:5000","language":"GO","version":317}]}}`))
	a := newAdmin(t, ns.addr())
	got, err := a.AllProducers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []ProducerClient{
		{Group: "pg-0", Broker: "broker-a", ClientID: "c1", Addr: "10.0.0.1:5000", Language: "GO", Version: 317},
		{Group: "pg-1", Broker: "broker-a", ClientID: "c2", Addr: "10.0.0.2:5000", Language: "JAVA", Version: 475},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("producers %+v\nwant %+v", got, want)
	}
	if n := len(bb.requests(protocol.ReqGetAllProducerInfo)); n != 1 {
		t.Fatalf("broker-b asked %d times", n)
	}
	// No broker serves it: the error says so.
	ba.on(protocol.ReqGetAllProducerInfo, nil)
	_, err = a.AllProducers(context.Background())
	var re *ResponseError
	if !errors.Is(err, ErrUnsupported) || !errors.As(err, &re) || !strings.Contains(re.Meaning(), "does not implement") {
		t.Fatalf("unsupported everywhere: %v", err)
	}
}
