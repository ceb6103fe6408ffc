package remoting

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// TLS modes of a server (ServerConfig.TLSMode), RocketMQ's tls.server.mode
// (Java's TlsMode).
const (
	// TLSDisabled serves plain connections only; a client that starts a
	// TLS handshake is closed (logged as such).
	TLSDisabled = "disabled"
	// TLSPermissive serves TLS and plain connections on the same port,
	// told apart by their first byte (0x16 starts a TLS handshake).
	TLSPermissive = "permissive"
	// TLSEnforcing serves TLS connections only; a plain one is closed.
	TLSEnforcing = "enforcing"
)

// tlsHandshakeByte is the first byte of a TLS record carrying a handshake
// (a ClientHello); a RocketMQ frame starts with its length's high byte,
// which is 0x16 only for frames of 369 MB and more, far over any limit.
const tlsHandshakeByte = 0x16

// TLSConfig is RocketMQ's TLS configuration (Java's TlsSystemConfig) under
// its key names; Set applies one key of a broker.conf, namesrv.conf or
// tls.properties. Zero is TLS off in both directions.
//
// The server side uses Mode, CertPath, KeyPath (PEM files) or TestMode,
// and the client-auth keys; the client side (this process's own outbound
// connections: a broker's to its name servers) uses Enable and
// ClientTrustCertPath.
type TLSConfig struct {
	// Mode (tls.server.mode) is disabled (default here; Java defaults to
	// permissive with a generated certificate), permissive or enforcing.
	Mode string
	// CertPath (tls.server.certPath) is the server's X.509 certificate
	// chain, PEM.
	CertPath string
	// KeyPath (tls.server.keyPath) is its private key, PEM (PKCS#1, PKCS#8
	// or SEC 1), unencrypted.
	KeyPath string
	// KeyPassword (tls.server.keyPassword) is accepted for compatibility;
	// encrypted keys are refused with an error saying to decrypt them
	// (Go's crypto/tls reads no encrypted PEM).
	KeyPassword string
	// NeedClientAuth (tls.server.need.client.auth) is none (default),
	// optional or require: whether the server asks clients for a
	// certificate.
	NeedClientAuth string
	// AuthClient (tls.server.authClient) verifies a client's certificate
	// against TrustCertPath (or the system roots); false accepts any, as
	// Java's InsecureTrustManagerFactory does.
	AuthClient bool
	// TrustCertPath (tls.server.trustCertPath) holds the CA certificates
	// client certificates are verified against, PEM.
	TrustCertPath string
	// TestMode (tls.test.mode.enable) makes the server generate a
	// self-signed certificate at start instead of reading CertPath and
	// KeyPath, as Java's test mode does. It is also used when Mode is not
	// disabled and no CertPath is set.
	TestMode bool
	// Certificate, set in code (no key of its own), is used instead of
	// CertPath and KeyPath: how runnel dev shares one generated certificate
	// between its name server and broker.
	Certificate *tls.Certificate

	// Enable (tlsEnable, tls.enable) makes this process's own outbound
	// connections use TLS.
	Enable bool
	// ClientTrustCertPath (tls.client.trustCertPath) holds the CA
	// certificates the outbound connections verify servers against; empty
	// skips verification (Java's tls.client.authServer=false, the default).
	ClientTrustCertPath string
}

// Set applies one RocketMQ TLS key. known is false for keys that are not
// TLS keys; err says why a value is bad.
func (c *TLSConfig) Set(key, val string) (known bool, err error) {
	parseBool := func(dst *bool) error {
		v, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("not a boolean")
		}
		*dst = v
		return nil
	}
	switch key {
	case "tls.server.mode":
		m, err := ParseTLSMode(val)
		if err != nil {
			return true, err
		}
		c.Mode = m
	case "tls.server.certPath":
		c.CertPath = val
	case "tls.server.keyPath":
		c.KeyPath = val
	case "tls.server.keyPassword":
		c.KeyPassword = val
	case "tls.server.need.client.auth":
		if _, err := clientAuth(val, false); err != nil {
			return true, err
		}
		c.NeedClientAuth = val
	case "tls.server.authClient":
		return true, parseBool(&c.AuthClient)
	case "tls.server.trustCertPath":
		c.TrustCertPath = val
	case "tls.test.mode.enable":
		return true, parseBool(&c.TestMode)
	case "tlsEnable", "tls.enable":
		return true, parseBool(&c.Enable)
	case "tls.client.trustCertPath":
		c.ClientTrustCertPath = val
	case "tls.client.authServer", "tls.client.certPath", "tls.client.keyPath", "tls.client.keyPassword", "tls.config.file":
		// Known and ignored: verification follows tls.client.trustCertPath,
		// and client certificates are not sent.
	default:
		return false, nil
	}
	return true, nil
}

// ParseTLSMode returns the canonical name of a tls.server.mode value
// (case-insensitive; "" is disabled).
func ParseTLSMode(s string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(s)); m {
	case "", TLSDisabled:
		return TLSDisabled, nil
	case TLSPermissive, TLSEnforcing:
		return m, nil
	}
	return "", fmt.Errorf("%w: tls.server.mode %q, want %s, %s or %s", ErrBadConfig, s, TLSDisabled, TLSPermissive, TLSEnforcing)
}

// ServerTLS returns the mode and the server's TLS configuration: nil when
// the mode is disabled, otherwise read from the files, or generated when
// TestMode is set or no CertPath is given (logged by the caller).
func (c *TLSConfig) ServerTLS() (mode string, cfg *tls.Config, err error) {
	mode, err = ParseTLSMode(c.Mode)
	if err != nil || mode == TLSDisabled {
		return mode, nil, err
	}
	var cert tls.Certificate
	if c.Certificate != nil {
		cert = *c.Certificate
	} else if c.TestMode || c.CertPath == "" {
		cert, _, err = SelfSignedCertificate()
	} else {
		cert, err = loadKeyPair(c.CertPath, c.KeyPath)
	}
	if err != nil {
		return mode, nil, err
	}
	cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	cfg.ClientAuth, err = clientAuth(c.NeedClientAuth, c.AuthClient)
	if err != nil {
		return mode, nil, err
	}
	if c.AuthClient && c.TrustCertPath != "" {
		if cfg.ClientCAs, err = loadPool(c.TrustCertPath, "tls.server.trustCertPath"); err != nil {
			return mode, nil, err
		}
	}
	return mode, cfg, nil
}

// ClientTLS returns the configuration of outbound connections: nil unless
// Enable is set.
func (c *TLSConfig) ClientTLS() (*tls.Config, error) {
	if !c.Enable {
		return nil, nil
	}
	return ClientTLSConfig(c.ClientTrustCertPath)
}

// ClientTLSConfig returns a client's TLS configuration. Without caFile the
// server's certificate is not verified: the connection is encrypted but the
// server is not authenticated, as with the official Go client (which skips
// verification always) and Java's default tls.client.authServer=false;
// that is what lets a client reach a dev broker's generated certificate.
// With caFile (PEM CA certificates) the chain and the host name are
// verified.
func ClientTLSConfig(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, nil //nolint:gosec // documented above
	}
	pool, err := loadPool(caFile, "CA file")
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// clientAuth maps Java's tls.server.need.client.auth and
// tls.server.authClient onto crypto/tls.
func clientAuth(need string, verify bool) (tls.ClientAuthType, error) {
	switch strings.ToLower(strings.TrimSpace(need)) {
	case "", "none":
		return tls.NoClientCert, nil
	case "optional":
		if verify {
			return tls.VerifyClientCertIfGiven, nil
		}
		return tls.RequestClientCert, nil
	case "require":
		if verify {
			return tls.RequireAndVerifyClientCert, nil
		}
		return tls.RequireAnyClientCert, nil
	}
	return 0, fmt.Errorf("%w: tls.server.need.client.auth %q, want none, optional or require", ErrBadConfig, need)
}

func loadKeyPair(certPath, keyPath string) (tls.Certificate, error) {
	if keyPath == "" {
		return tls.Certificate{}, fmt.Errorf("%w: tls.server.certPath is set but tls.server.keyPath is not", ErrBadConfig)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls.server.keyPath: %v", ErrBadConfig, err)
	}
	if b, _ := pem.Decode(keyPEM); b != nil && (b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "") {
		return tls.Certificate{}, fmt.Errorf("%w: tls.server.keyPath %s is encrypted; decrypt it (openssl pkcs8 -in key -out plain.key)", ErrBadConfig, keyPath)
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls.server.certPath: %v", ErrBadConfig, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls.server.certPath %s / keyPath %s: %v", ErrBadConfig, certPath, keyPath, err)
	}
	return cert, nil
}

func loadPool(path, what string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadConfig, what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%w: %s %s holds no PEM certificate", ErrBadConfig, what, path)
	}
	return pool, nil
}

// SelfSignedCertificate generates an ECDSA P-256 certificate valid for a
// year for localhost, 127.0.0.1, ::1 and this host's name, and returns it
// with its PEM (for a client's CA file).
func SelfSignedCertificate() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("remoting: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("remoting: generate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "runnel dev", Organization: []string{"Runnel"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("remoting: self-sign: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}
