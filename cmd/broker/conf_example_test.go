package main

import (
	"os"
	"testing"

	"github.com/runnelmq/runnel/broker/config"
)

// The example broker.conf (docs/broker.conf) uses only keys the broker honours, and
// they validate.
func TestExampleBrokerConf(t *testing.T) {
	f, err := os.Open("../../docs/broker.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := config.Default()
	ignored, err := cfg.ApplyProperties(f)
	if err != nil || len(ignored) > 0 {
		t.Fatalf("docs/broker.conf: ignored %v, err %v", ignored, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.BrokerName != "broker-a" || cfg.MaxMessageSize != 4194304 {
		t.Fatalf("config %+v", cfg)
	}
}
