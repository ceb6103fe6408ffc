package integration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
)

// tlsCluster is a cluster serving TLS in one mode.
type tlsCluster struct {
	*cluster.Cluster
	// caFile is the PEM of the broker's certificate (self-signed, so its
	// own CA), for clients that verify.
	caFile string
}

// startTLSCluster starts a name server and a broker in mode. The broker
// reads its certificate from files (tls.server.certPath/keyPath, as a
// broker.conf names them) and, when mode is enforcing, calls the name
// server over TLS (tlsEnable); the name server generates its own.
func startTLSCluster(t testing.TB, mode string) tlsCluster {
	t.Helper()
	cert, certPath := cluster.Certificate(t, "broker.pem")
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(filepath.Dir(certPath), "broker.key")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("tls.server.mode=%s\ntls.server.certPath=%s\ntls.server.keyPath=%s\ntlsEnable=%v\n",
		mode, certPath, keyPath, mode == remoting.TLSEnforcing)
	c := cluster.Start(t,
		cluster.ConfigureNamesrv(func(cfg *namesrv.Config) { cfg.TLS.Mode = mode }),
		cluster.Configure(func(_ int, cfg *config.Config) {
			if ignored, err := cfg.ApplyProperties(strings.NewReader(conf)); err != nil || len(ignored) > 0 {
				t.Fatalf("broker.conf: ignored %v, %v", ignored, err)
			}
		}))
	return tlsCluster{Cluster: c, caFile: certPath}
}

// officialPlainAgain makes the official client's later instances plain
// again when t ends. Its WithTls options write through to one
// process-wide default (internal/remote.DefaultRemotingClientConfig, which
// every instance's options point to), so the last WithTls given decides
// the wire of every official connection dialled after it, in any test;
// an admin created with WithTls(false) resets it. Register it first, so
// it runs after the clients' own cleanups.
func officialPlainAgain(t testing.TB) {
	t.Cleanup(func() {
		a, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{"127.0.0.1:9"})), admin.WithTls(false))
		if err != nil {
			t.Errorf("reset the official client's TLS default: %v", err)
			return
		}
		_ = a.Close()
	})
}

// createTopicTLS creates topic with the official admin, over TLS.
func createTopicTLS(t testing.TB, c tlsCluster, topic string) {
	t.Helper()
	createTopic(t, c.Cluster, 0, topic, 2, admin.WithTls(true))
}

func officialTLSProducer(t testing.TB, c tlsCluster, useTLS bool) rocketmq.Producer {
	t.Helper()
	return newProducer(t, c.Cluster, producer.WithGroupName("pg-tls"), withNoRetry(),
		producer.WithSendMsgTimeout(3*time.Second), producer.WithTls(useTLS))
}

func rcTLSConfig(c tlsCluster, useTLS bool, caFile string) client.ClientConfig {
	cfg := rcClientConfig(c.Cluster)
	cfg.TLS, cfg.TLSCAFile = useTLS, caFile
	return cfg
}

// The official producer sends with WithTls(true) to a permissive cluster,
// and without it on the same ports; to an enforcing one only with it.
func TestTLSOfficialProducer(t *testing.T) {
	officialPlainAgain(t)
	for _, mode := range []string{remoting.TLSPermissive, remoting.TLSEnforcing} {
		t.Run(mode, func(t *testing.T) {
			c := startTLSCluster(t, mode)
			createTopicTLS(t, c, "TLSTopic")
			send := func(p rocketmq.Producer, body string) error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				res, err := p.SendSync(ctx, primitive.NewMessage("TLSTopic", []byte(body)))
				if err == nil && res.Status != primitive.SendOK {
					err = fmt.Errorf("status %v", res.Status)
				}
				return err
			}
			if err := send(officialTLSProducer(t, c, true), "over-tls"); err != nil {
				t.Fatalf("WithTls(true): %v", err)
			}
			err := send(officialTLSProducer(t, c, false), "plain")
			if mode == remoting.TLSPermissive && err != nil {
				t.Fatalf("plain producer, permissive: %v", err)
			}
			if mode == remoting.TLSEnforcing && err == nil {
				t.Fatal("plain producer, enforcing: sent")
			}
		})
	}
}

// Runnel's own client sends and consumes over TLS against an enforcing
// cluster, verifying the broker's certificate with a CA file; a plain one
// is refused; one trusting another CA fails its handshake.
func TestTLSRunnelClient(t *testing.T) {
	officialPlainAgain(t)
	c := startTLSCluster(t, remoting.TLSEnforcing)
	createTopicTLS(t, c, "TLSRC")

	// The name server's certificate is generated (and not known here), so
	// the client does not verify; verification is checked against the
	// broker directly below.
	pcfg := client.DefaultProducerConfig()
	pcfg.Client = rcTLSConfig(c, true, "")
	pcfg.Group = "rc-pg-tls"
	p := clitest.StartProducer(t, pcfg)
	for i := range 5 {
		if _, err := p.Send(context.Background(), &client.Message{Topic: "TLSRC", Body: []byte(body(i))}); err != nil {
			t.Fatalf("send over TLS: %v", err)
		}
	}
	got := newRCCollector()
	ccfg := client.DefaultPushConsumerConfig()
	ccfg.Client = rcTLSConfig(c, true, "")
	ccfg.Group = "rc-cg-tls"
	ccfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			got.add(m)
		}
		return client.ConsumeSuccess
	}
	ccfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	clitest.StartConsumer(t, ccfg, "TLSRC", "*")
	testwait.For(t, 20*time.Second, "5 messages consumed over TLS", func() bool { return got.len() == 5 })

	// Plain against enforcing: the name server closes the connection.
	pcfg = client.DefaultProducerConfig()
	pcfg.Client = rcTLSConfig(c, false, "")
	pcfg.Group = "rc-pg-plain"
	plain, err := client.NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Shutdown(context.Background())
	if err := plain.Start(context.Background()); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = plain.Send(ctx, &client.Message{Topic: "TLSRC", Body: []byte("plain")})
		cancel()
		if err == nil {
			t.Fatal("plain client sent to an enforcing cluster")
		}
	}

	// Verification: the broker's own certificate as CA passes, another
	// fails with an unknown authority.
	verify := func(ca string) error {
		rc, err := remoting.ClientTLSConfig(ca)
		if err != nil {
			t.Fatal(err)
		}
		cl := remoting.NewClient(remoting.ClientConfig{TLS: rc, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		defer cl.Close()
		_, err = cl.Conn(context.Background(), c.BrokerAddr(0))
		return err
	}
	if err := verify(c.caFile); err != nil {
		t.Fatalf("verifying the broker with its certificate: %v", err)
	}
	_, otherCA := cluster.Certificate(t, "other.pem")
	var uae x509.UnknownAuthorityError
	if err := verify(otherCA); !errors.As(err, &uae) {
		t.Fatalf("verifying the broker with another CA: %v", err)
	}
}

// docs/tls.md's broker.conf uses only keys the broker honours.
func TestDocsTLSBrokerConf(t *testing.T) {
	readme, err := os.ReadFile("../docs/tls.md")
	if err != nil {
		t.Fatal(err)
	}
	conf := clitest.FencedBlock(t, string(readme), "```properties\n# broker.conf\n")
	// Uncomment the optional client-auth keys: they must be known too.
	conf = strings.ReplaceAll(conf, "#tls.", "tls.")
	cfg := config.Default()
	ignored, err := cfg.ApplyProperties(strings.NewReader(conf))
	if err != nil || len(ignored) > 0 {
		t.Fatalf("docs/tls.md broker.conf: ignored %v, %v", ignored, err)
	}
	want := remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertPath: "/etc/runnel/tls/server.pem", KeyPath: "/etc/runnel/tls/server.key",
		NeedClientAuth: "require", AuthClient: true, TrustCertPath: "/etc/runnel/tls/clients-ca.pem", Enable: true}
	if cfg.TLS != want {
		t.Fatalf("TLS config %+v, want %+v", cfg.TLS, want)
	}
}
