package main

import (
	"testing"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/clitest"
)

// --metrics turns the exporter on at its address and wins over
// broker.conf; --metrics "" turns off what the file turned on.
func TestMetricsFlag(t *testing.T) {
	conf := clitest.WriteFile(t, "broker.conf", "metricsExporterType=PROM\nmetricsPromExporterPort=6000\n")
	parse := func(args ...string) (config.Config, error) { return parseArgs(noEnv, discard, args...) }
	cfg, err := parse()
	if err != nil || cfg.Metrics.Enabled() {
		t.Fatalf("default: metrics %+v, %v; want off", cfg.Metrics, err)
	}
	cfg, err = parse("--metrics", "127.0.0.1:7000")
	if err != nil || !cfg.Metrics.Enabled() || cfg.Metrics.Addr() != "127.0.0.1:7000" {
		t.Fatalf("--metrics: %+v, %v", cfg.Metrics, err)
	}
	cfg, err = parse("-c", conf)
	if err != nil || !cfg.Metrics.Enabled() || cfg.Metrics.PromPort != 6000 {
		t.Fatalf("broker.conf: %+v, %v", cfg.Metrics, err)
	}
	cfg, err = parse("-c", conf, "--metrics", "")
	if err != nil || cfg.Metrics.Enabled() {
		t.Fatalf(`--metrics "": %+v, %v`, cfg.Metrics, err)
	}
	if _, err := parse("--metrics", "nope"); err == nil {
		t.Fatal("--metrics nope accepted")
	}
}
