package cluster

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
)

// TLSCluster is a name server and a broker serving TLS, started by
// StartTLS.
type TLSCluster struct {
	NamesrvAddr, BrokerAddr string
	// CAFile is the PEM of the certificate both serve (self-signed, so its
	// own CA), for clients that verify.
	CAFile string
}

// StartTLS starts a name server and a broker in TLS mode (permissive or
// enforcing) sharing one generated certificate; the broker calls the name
// server over TLS (tlsEnable). Both are closed at cleanup.
func StartTLS(t testing.TB, mode string) TLSCluster {
	t.Helper()
	cert, certPEM, err := remoting.SelfSignedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tlsCfg := remoting.TLSConfig{Mode: mode, Certificate: &cert, Enable: true}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	storeDir := t.TempDir() // before the broker's cleanup, so removed after it

	ncfg := namesrv.DefaultConfig()
	ncfg.ListenAddr, ncfg.Logger, ncfg.TLS = "127.0.0.1:0", log, tlsCfg
	ns, err := namesrv.New(ncfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	bcfg := config.Default()
	bcfg.ListenAddr, bcfg.StoreDir, bcfg.Logger, bcfg.TLS = "127.0.0.1:0", storeDir, log, tlsCfg
	bcfg.NamesrvAddrs = []string{ns.Addr()}
	b, err := broker.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return TLSCluster{NamesrvAddr: ns.Addr(), BrokerAddr: b.Addr(), CAFile: caFile}
}
