package rebalance

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/leakcheck"
)

// The official client's packages, which official_test.go compares against,
// start a cache janitor when they load.
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"))
}
