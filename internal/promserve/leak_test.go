package promserve

import (
	"testing"

	"github.com/runnelmq/runnel/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
