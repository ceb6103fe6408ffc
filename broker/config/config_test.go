package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

func TestConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"no store dir":  func(c *Config) { c.StoreDir = "" },
		"bad name":      func(c *Config) { c.BrokerName = "a b" },
		"queue nums":    func(c *Config) { c.DefaultTopicQueueNums = 5000 },
		"namesrv":       func(c *Config) { c.NamesrvAddrs = []string{"nope"} },
		"advertise":     func(c *Config) { c.AdvertiseAddr = "1.2.3.4" },
		"negative id":   func(c *Config) { c.BrokerID = -1 },
		"max msg size":  func(c *Config) { c.MaxMessageSize = -1 },
		"register ival": func(c *Config) { c.RegisterInterval = -time.Second },
	} {
		cfg := Default()
		cfg.StoreDir = "/tmp/x"
		mod(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
	cfg := Default()
	cfg.StoreDir = "/tmp/x"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestEnsureDefaultsFillsEveryDefault: a zero Config gets every default
// DefaultConfig names, except the fields whose zero is meaningful; a field
// added to DefaultConfig but not to ensureDefaults fails here.
func TestEnsureDefaultsFillsEveryDefault(t *testing.T) {
	var got Config
	got.EnsureDefaults()
	if got.Now == nil {
		t.Fatal("Now left nil")
	}
	want := Default()
	want.AutoCreateTopicEnable = false // taken as given
	want.EnablePropertyFilter = false  // likewise
	got.Now, want.Now = nil, nil       // funcs do not compare
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ensureDefaults on a zero Config:\n got %+v\nwant %+v", got, want)
	}
	set := Config{MaxSuspend: time.Second, TransactionCheckMax: 3}
	set.EnsureDefaults()
	if set.MaxSuspend != time.Second || set.TransactionCheckMax != 3 {
		t.Fatalf("set fields overwritten: MaxSuspend %v, TransactionCheckMax %d", set.MaxSuspend, set.TransactionCheckMax)
	}
}

func TestApplyProperties(t *testing.T) {
	conf := `# a RocketMQ broker.conf
brokerClusterName = Prod
brokerName=broker-z
brokerId=0
namesrvAddr=10.0.0.1:9876;10.0.0.2:9876
listenPort=20911
brokerIP1=192.0.2.7
storePathRootDir=/data/rmq
flushDiskType=SYNC_FLUSH
autoCreateTopicEnable=false
fileReservedTime=48
defaultTopicQueueNums=8
deleteWhen=04
`
	cfg := Default()
	ignored, err := cfg.ApplyProperties(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ignored, []string{"deleteWhen"}) {
		t.Errorf("ignored %v", ignored)
	}
	want := Default()
	if cfg.ClusterName != "Prod" || cfg.BrokerName != "broker-z" || cfg.ListenAddr != ":20911" ||
		cfg.AdvertiseAddr != "192.0.2.7:20911" || cfg.StoreDir != "/data/rmq" || cfg.FlushMode != store.SyncFlush ||
		cfg.AutoCreateTopicEnable || cfg.FileReservedTime != 48*time.Hour || cfg.DefaultTopicQueueNums != 8 ||
		!slices.Equal(cfg.NamesrvAddrs, []string{"10.0.0.1:9876", "10.0.0.2:9876"}) || want.ListenAddr != ":10911" {
		t.Errorf("config %+v", cfg)
	}
	for _, bad := range []string{"listenPort=x", "brokerId=one", "flushDiskType=SOMETIMES", "autoCreateTopicEnable=maybe", "just a line"} {
		c := Default()
		if _, err := c.ApplyProperties(strings.NewReader(bad)); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%q: %v, want ErrBadConfig", bad, err)
		}
	}
}

func TestResolveAdvertise(t *testing.T) {
	for _, tc := range []struct{ configured, listening, want string }{
		{"", "127.0.0.1:4000", "127.0.0.1:4000"},
		{"192.0.2.1:5000", "127.0.0.1:4000", "192.0.2.1:5000"},
		{"192.0.2.1:0", "127.0.0.1:4000", "192.0.2.1:4000"},
	} {
		got, err := Advertise(tc.configured, tc.listening)
		if err != nil || got.String() != tc.want {
			t.Errorf("Advertise(%q, %q) = %v, %v; want %s", tc.configured, tc.listening, got, err, tc.want)
		}
	}
	got, err := Advertise("", "[::]:4000")
	if err != nil || !got.Addr().Is4() || got.Port() != 4000 {
		t.Errorf("unspecified host: %v %v", got, err)
	}
}

func TestApplyDiskRatios(t *testing.T) {
	var c Config
	ignored, err := c.ApplyProperties(strings.NewReader("diskMaxUsedSpaceRatio=70\ndiskSpaceCleanForciblyRatio=80\ndiskSpaceWarningLevelRatio=88\n"))
	if err != nil || len(ignored) != 0 {
		t.Fatalf("ignored %v, err %v", ignored, err)
	}
	if c.DiskMaxUsedSpaceRatio != 70 || c.DiskSpaceCleanForciblyRatio != 80 || c.DiskSpaceWarningLevelRatio != 88 {
		t.Fatalf("ratios %d %d %d", c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio)
	}
	for _, bad := range []string{"diskSpaceWarningLevelRatio=99", "diskMaxUsedSpaceRatio=x", "diskSpaceCleanForciblyRatio=5"} {
		if _, err := c.ApplyProperties(strings.NewReader(bad)); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestApplyPropertiesReadsProtocolSyntax: broker.conf and the properties
// bodies (UPDATE_BROKER_CONFIG, the runtime file) are one syntax, so
// every spelling of a line means the same key and value to
// ApplyProperties as to protocol.ParseProperties.
func TestApplyPropertiesReadsProtocolSyntax(t *testing.T) {
	long := strings.Repeat("b", 100<<10) // beyond bufio's default 64 KiB line
	for _, text := range []string{
		"brokerName=a",
		"  brokerName \t=\t a b \t",
		"brokerName: a",
		"brokerName:a=b",
		"brokerName=a:b",
		"brokerName=",
		`brokerName=a\nb\\`, // no escapes: the backslashes stay
		"# brokerName=no\n! brokerName=no\n\n\r\nbrokerName=yes\r\n",
		"brokerName=first\nbrokerName=last",
		"brokerName=" + long,
	} {
		props, err := protocol.ParseProperties(text)
		if err != nil {
			t.Fatalf("%.40q: ParseProperties: %v", text, err)
		}
		c := Default()
		if ignored, err := c.ApplyProperties(strings.NewReader(text)); err != nil || len(ignored) != 0 {
			t.Fatalf("%.40q: ApplyProperties: %v, ignored %v", text, err, ignored)
		}
		if c.BrokerName != props["brokerName"] {
			t.Errorf("%.40q: ApplyProperties read %.40q, ParseProperties %.40q", text, c.BrokerName, props["brokerName"])
		}
	}
	for _, bad := range []string{"brokerName", "brokerName=a\n  no separator\n"} {
		_, perr := protocol.ParseProperties(bad)
		c := Default()
		_, aerr := c.ApplyProperties(strings.NewReader(bad))
		if !errors.Is(perr, protocol.ErrPropertiesSyntax) || !errors.Is(aerr, protocol.ErrPropertiesSyntax) || !errors.Is(aerr, ErrBadConfig) {
			t.Errorf("%q: ParseProperties %v, ApplyProperties %v", bad, perr, aerr)
		}
	}
}

// TestConfigSet: Set is one line of broker.conf; listenAddr and
// advertiseAddr are Runnel's keys, which listenPort and brokerIP1 refine
// when a file holds both.
func TestConfigSet(t *testing.T) {
	c := Default()
	if known, err := c.Set("listenAddr", "127.0.0.1:1"); !known || err != nil || c.ListenAddr != "127.0.0.1:1" {
		t.Fatalf("listenAddr: %v %v %q", known, err, c.ListenAddr)
	}
	if known, err := c.Set("listenPort", "2"); !known || err != nil || c.ListenAddr != "127.0.0.1:2" {
		t.Fatalf("listenPort: %v %v %q", known, err, c.ListenAddr)
	}
	if known, err := c.Set("brokerIP1", "192.0.2.1"); !known || err != nil || c.AdvertiseAddr != "192.0.2.1:2" {
		t.Fatalf("brokerIP1: %v %v %q", known, err, c.AdvertiseAddr)
	}
	if known, err := c.Set("deleteWhen", "04"); known || err != nil {
		t.Fatalf("an unknown key: %v %v", known, err)
	}
	if known, err := c.Set("brokerId", "one"); !known || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), `brokerId="one"`) {
		t.Fatalf("a bad value: %v %v", known, err)
	}
	f := Default()
	if _, err := f.ApplyProperties(strings.NewReader("listenPort=20911\nlistenAddr=10.0.0.1:1\nadvertiseAddr=h:1\nbrokerIP1=192.0.2.9\n")); err != nil {
		t.Fatal(err)
	}
	if f.ListenAddr != "10.0.0.1:20911" || f.AdvertiseAddr != "192.0.2.9:20911" {
		t.Fatalf("listen %q, advertise %q", f.ListenAddr, f.AdvertiseAddr)
	}
}

// TestBadSecretNotShown: an error about a key that holds a password
// names the key and the line, never the value (errors end in logs).
func TestBadSecretNotShown(t *testing.T) {
	cfg := Default()
	_, err := cfg.ApplyProperties(strings.NewReader(`initAuthenticationUser={"username":"root","password":"hunter2-secret"`))
	if err == nil || !strings.Contains(err.Error(), "initAuthenticationUser") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v: want one naming the key, not the password", err)
	}
	if _, err := cfg.Set("innerClientAuthenticationCredentials", `{"accessKey":"a","secretKey":"hunter2-secret"`); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Set: %v", err)
	}
}
