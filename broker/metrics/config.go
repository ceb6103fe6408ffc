package metrics

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/internal/promserve"
)

// ErrBadConfig is wrapped by configuration errors; the message names the
// bad field.
var ErrBadConfig = errors.New("metrics: bad config")

// Exporter types (RocketMQ MetricsExporterType). Only PROM exports here;
// OTLP_GRPC and LOG are accepted, so a Java broker.conf loads, and export
// nothing.
const (
	ExporterDisable  = "DISABLE"
	ExporterOTLPGRPC = "OTLP_GRPC"
	ExporterProm     = "PROM"
	ExporterLog      = "LOG"
)

// Other is the label value standing for every topic or group past the
// limits.
const Other = "_other"

// Config configures the exporter. Start from DefaultConfig.
type Config struct {
	// ExporterType (metricsExporterType): PROM serves /metrics. Default
	// DISABLE, as Java.
	ExporterType string
	// PromHost (metricsPromExporterHost) is the address the HTTP server
	// binds. Default "": every interface.
	PromHost string
	// PromPort (metricsPromExporterPort). Default 5557, as Java; 0 in a
	// Config that sets other fields picks a free port (tests).
	PromPort int
	// TopicLimit (metricsTopicLimit) is how many distinct topics get a
	// topic label value of their own; later ones are counted under
	// "_other". Default 1000.
	TopicLimit int
	// GroupLimit (metricsGroupLimit) is the same for consumer groups.
	// Default 1000.
	GroupLimit int
}

// DefaultConfig returns the defaults for every field.
func DefaultConfig() Config {
	return Config{ExporterType: ExporterDisable, PromPort: 5557, TopicLimit: 1000, GroupLimit: 1000}
}

// EnsureDefaults fills the zero fields that have no meaningful zero value.
// A zero Config becomes DefaultConfig; otherwise PromPort 0 is taken as
// given (a free port).
func (c *Config) EnsureDefaults() {
	d := DefaultConfig()
	if *c == (Config{}) {
		*c = d
		return
	}
	if c.ExporterType == "" {
		c.ExporterType = d.ExporterType
	}
	c.ExporterType = strings.ToUpper(c.ExporterType)
	if c.TopicLimit == 0 {
		c.TopicLimit = d.TopicLimit
	}
	if c.GroupLimit == 0 {
		c.GroupLimit = d.GroupLimit
	}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch strings.ToUpper(c.ExporterType) {
	case "", ExporterDisable, ExporterOTLPGRPC, ExporterProm, ExporterLog: // "" is DISABLE
	default:
		return fmt.Errorf("%w: MetricsExporterType %q is none of DISABLE, PROM, OTLP_GRPC, LOG", ErrBadConfig, c.ExporterType)
	}
	switch {
	case c.PromPort < 0 || c.PromPort > 65535:
		return fmt.Errorf("%w: MetricsPromExporterPort %d", ErrBadConfig, c.PromPort)
	case c.TopicLimit < 0:
		return fmt.Errorf("%w: MetricsTopicLimit %d is negative", ErrBadConfig, c.TopicLimit)
	case c.GroupLimit < 0:
		return fmt.Errorf("%w: MetricsGroupLimit %d is negative", ErrBadConfig, c.GroupLimit)
	}
	return nil
}

// Enabled reports whether /metrics is served.
func (c *Config) Enabled() bool { return strings.EqualFold(c.ExporterType, ExporterProm) }

// Addr is the HTTP server's listen address.
func (c *Config) Addr() string { return net.JoinHostPort(c.PromHost, strconv.Itoa(c.PromPort)) }

// ApplyKey sets the field of a broker.conf key it knows and reports
// whether it knew it; a malformed value is an error.
func (c *Config) ApplyKey(key, val string) (bool, error) {
	atoi := func() (int, error) { return strconv.Atoi(val) }
	switch key {
	case "metricsExporterType":
		c.ExporterType = strings.ToUpper(val)
		return true, c.Validate()
	case "metricsPromExporterHost":
		c.PromHost = val
	case "metricsPromExporterPort", "metricsTopicLimit", "metricsGroupLimit":
		v, err := atoi()
		if err != nil {
			return true, err
		}
		switch key {
		case "metricsPromExporterPort":
			c.PromPort = v
		case "metricsTopicLimit":
			c.TopicLimit = v
		default:
			c.GroupLimit = v
		}
		return true, c.Validate()
	default:
		return false, nil
	}
	return true, nil
}

// SetAddr turns the exporter on at addr (host:port, as a flag gives it),
// or off when addr is "".
func (c *Config) SetAddr(addr string) error {
	if addr == "" {
		c.ExporterType = ExporterDisable
		return nil
	}
	host, port, err := promserve.SplitAddr(addr)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	c.ExporterType, c.PromHost, c.PromPort = ExporterProm, host, port
	return nil
}
