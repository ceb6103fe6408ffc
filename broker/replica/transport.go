package replica

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The raft transport between a group's members: raft's own TCP transport,
// or, when Config.TLS is set, raft's network transport over a stream layer
// of mutual TLS. Every member presents a certificate the others trust (the
// group's CA's, or one certificate they all share), and a connection from
// anyone else is closed at its handshake: a stranger's RPC is never
// decoded, let alone answered. The handshake is bounded by the
// transport's timeout, so a peer that connects and says nothing holds a
// goroutine no longer.

// tcpTransport is the node's transport on cfg.BindAddr.
func tcpTransport(cfg *Config) (raft.Transport, error) {
	adv, err := net.ResolveTCPAddr("tcp", cfg.AdvertiseAddr)
	if err != nil {
		return nil, fmt.Errorf("%w: advertise address %q: %v", ErrBadConfig, cfg.AdvertiseAddr, err)
	}
	const timeout = 2 * time.Second
	if cfg.TLS == nil {
		t, err := raft.NewTCPTransportWithConfig(cfg.BindAddr, adv, &raft.NetworkTransportConfig{
			MaxPool: 4, Timeout: timeout, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("replica: raft transport on %s: %w", cfg.BindAddr, err)
		}
		return t, nil
	}
	ln, err := net.Listen("tcp", cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("replica: raft transport on %s: %w", cfg.BindAddr, err)
	}
	s := &tlsStream{ln: ln, adv: adv, cfg: cfg.TLS, timeout: timeout}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: s, MaxPool: 4, Timeout: timeout, Logger: cfg.Logger,
	}), nil
}

// tlsStream is raft.StreamLayer over mutual TLS.
type tlsStream struct {
	ln      net.Listener
	adv     net.Addr
	cfg     *tls.Config
	timeout time.Duration
}

// Accept returns the next connection; its handshake runs at its first
// read, on raft's goroutine for it, so a slow stranger never holds up the
// accept loop.
func (s *tlsStream) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	return &handshaking{Conn: tls.Server(c, s.cfg), timeout: s.timeout}, nil
}

func (s *tlsStream) Close() error   { return s.ln.Close() }
func (s *tlsStream) Addr() net.Addr { return s.adv }

// Dial connects to a member and completes the handshake within timeout.
func (s *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	return tls.DialWithDialer(d, "tcp", string(address), s.cfg)
}

// handshaking is an accepted connection whose handshake is done, once and
// within timeout, before its first read or write.
type handshaking struct {
	*tls.Conn
	timeout time.Duration
	once    sync.Once
	err     error
}

func (c *handshaking) handshake() {
	c.once.Do(func() {
		_ = c.Conn.SetDeadline(time.Now().Add(c.timeout))
		c.err = c.Conn.Handshake()
		_ = c.Conn.SetDeadline(time.Time{})
	})
}

func (c *handshaking) Read(p []byte) (int, error) {
	if c.handshake(); c.err != nil {
		return 0, c.err
	}
	return c.Conn.Read(p)
}

func (c *handshaking) Write(p []byte) (int, error) {
	if c.handshake(); c.err != nil {
		return 0, c.err
	}
	return c.Conn.Write(p)
}

// TLSConfig is the mutual TLS of a group's transport (Config.TLS): this
// member's certificate and key (PEM files), and the certificates a member
// must present one chained to (caFile, PEM; "" trusts the member's own
// certificate, for a group whose members all share one). A member is
// known by its certificate alone, not by the name or address in it: the
// group's addresses are its own (dLegerPeers), often names of a private
// network.
func TLSConfig(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: raft TLS: %v", ErrBadConfig, err)
	}
	if caFile == "" {
		caFile = certFile
	}
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%w: raft TLS: %v", ErrBadConfig, err)
	}
	pool, n := x509.NewCertPool(), 0
	for rest := pemBytes; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: raft TLS: %s: %v", ErrBadConfig, caFile, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: raft TLS: %s holds no certificate", ErrBadConfig, caFile)
	}
	return MemberTLS(cert, pool), nil
}

// MemberTLS is the mutual TLS of a member holding cert that trusts the
// certificates chained to pool: both sides of every connection must show
// one. TLSConfig reads them from files.
func MemberTLS(cert tls.Certificate, pool *x509.CertPool) *tls.Config {
	verify := func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("replica: the peer showed no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("replica: the peer's certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err != nil {
			return fmt.Errorf("replica: the peer is not a member of the group: %w", err)
		}
		return nil
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS13,
		// Both sides verify the other's chain themselves (verify), against
		// the group's pool and not the system's, and by no name.
		ClientAuth:            tls.RequireAnyClientCert,
		InsecureSkipVerify:    true, //nolint:gosec // verify checks the chain
		VerifyPeerCertificate: verify,
	}
}
