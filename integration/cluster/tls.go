package cluster

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

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
	cert, caFile := Certificate(t, "ca.pem")
	tlsCfg := remoting.TLSConfig{Mode: mode, Certificate: &cert, Enable: true}
	c := Start(t,
		ConfigureNamesrv(func(cfg *namesrv.Config) { cfg.TLS = tlsCfg }),
		Configure(func(_ int, cfg *config.Config) { cfg.TLS = tlsCfg }))
	return TLSCluster{NamesrvAddr: c.NamesrvAddr(), BrokerAddr: c.BrokerAddr(0), CAFile: caFile}
}

// Certificate generates a self-signed certificate (remoting's, for
// localhost and 127.0.0.1) and writes its PEM to a file named name in a new
// temporary directory: the CA file of a client that verifies it.
func Certificate(t testing.TB, name string) (cert tls.Certificate, pemFile string) {
	t.Helper()
	cert, certPEM, err := remoting.SelfSignedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	pemFile = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(pemFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, pemFile
}
