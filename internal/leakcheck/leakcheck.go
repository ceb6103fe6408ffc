// Package leakcheck is the tests' goroutine-leak check, go.uber.org/goleak
// with what outlives every test by design allowed: a package's TestMain
// calls VerifyTestMain. Only tests import it.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// Netpoll allows netpoll's pollers: netpoll starts them once per process
// and never stops them.
var Netpoll = goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait")

// VerifyTestMain runs m's tests, then fails the test binary if goroutines
// other than netpoll's pollers and those ignore allows are left.
func VerifyTestMain(m *testing.M, ignore ...goleak.Option) {
	goleak.VerifyTestMain(m, append([]goleak.Option{Netpoll}, ignore...)...)
}
