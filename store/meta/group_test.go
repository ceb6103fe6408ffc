package meta

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/runnelmq/runnel/groupconf"
)

// goldenGroup is a group config with every field away from its zero
// value, so each one shows in the encodings below.
var goldenGroup = groupconf.Config{
	GroupName: "g1", ConsumeEnable: true, ConsumeFromMinEnable: false, ConsumeBroadcastEnable: true,
	NotifyConsumerIdsChangedEnable: true, RetryQueueNums: 2, RetryMaxTimes: -1, BrokerID: 3,
	WhichBrokerWhenConsumeSlowly: -5, GroupSysFlag: 4, ConsumeTimeoutMinute: 15,
}

// goldenGroupJSON is the stored record ('M' 'G' | group) of goldenGroup as
// the store wrote it before the group config type moved to package
// groupconf: the record is read back by every later version, and two
// versions replaying one raft log must write the same bytes.
const goldenGroupJSON = `{"groupName":"g1","consumeEnable":true,"consumeFromMinEnable":false,"consumeBroadcastEnable":true,` +
	`"notifyConsumerIdsChangedEnable":true,"retryQueueNums":2,"retryMaxTimes":-1,"brokerId":3,` +
	`"whichBrokerWhenConsumeSlowly":-5,"groupSysFlag":4,"consumeTimeoutMinute":15}`

// goldenGroupBinary is goldenGroup in a store op's binary form, as that
// code wrote it.
const goldenGroupBinary = "026731" + "0d" + "04" + "01" + "06" + "09" + "08" + "1e"

func TestGroupStoredForm(t *testing.T) {
	b, err := EncodeGroup(&goldenGroup)
	if err != nil || string(b) != goldenGroupJSON {
		t.Fatalf("EncodeGroup = %s, %v\nwant %s", b, err, goldenGroupJSON)
	}
	got, err := DecodeGroup([]byte(goldenGroupJSON))
	if err != nil || got != goldenGroup {
		t.Fatalf("DecodeGroup = %+v, %v", got, err)
	}
	bin := AppendGroupBinary(nil, &goldenGroup)
	if hex.EncodeToString(bin) != goldenGroupBinary {
		t.Fatalf("AppendGroupBinary = %x, want %s", bin, goldenGroupBinary)
	}
	want, _ := hex.DecodeString(goldenGroupBinary)
	got, n, err := DecodeGroupBinary(append(want, 0xff))
	if err != nil || n != len(want) || got != goldenGroup {
		t.Fatalf("DecodeGroupBinary = %+v, %d, %v", got, n, err)
	}
	for _, bad := range []groupconf.Config{{}, {GroupName: string(make([]byte, 256))}, {GroupName: "g", GroupSysFlag: 1 << 31},
		{GroupName: "g", RetryMaxTimes: -1 << 32}} {
		if err := ValidateGroup(&bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateGroup(%+v) = %v", bad, err)
		}
	}
	if err := ValidateGroup(&goldenGroup); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if _, _, err := DecodeGroupBinary(want[:i]); !errors.Is(err, ErrInvalid) {
			t.Errorf("truncated to %d bytes: %v", i, err)
		}
	}
}
