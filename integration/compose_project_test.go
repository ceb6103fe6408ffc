//go:build !race

package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// composeProjectName is the compose project TestCompose runs as. It is not
// `runnel`, the project of `make compose-up`, and the test also moves the
// network and the published ports (see newComposeProject), so a developer's
// running dev cluster and the test leave each other alone.
const composeProjectName = "runnel-composetest"

// devComposeNet is docker-compose.yml's default RUNNEL_NET, which the test
// never takes so that `make compose-up` can start while the test runs.
const devComposeNet = "10.213.57"

// composeCommandTimeout bounds every docker command the test runs, so a
// hung engine fails the test with the command's output instead of running
// into go test's own timeout.
const composeCommandTimeout = 4 * time.Minute

// composeProject runs scripts/compose.sh and docker compose for one project
// on a network and ports chosen to be free on this machine.
type composeProject struct {
	t       *testing.T
	root    string
	compose []string // "docker compose" or "docker-compose", then -p name
	env     []string

	net                      string // first three octets of the network's /24
	gateway                  string // the address the brokers advertise
	nsPort, aPort, bPort     int    // published ports
	namesrvAddr              string // the name server as the host reaches it
	brokerAAddr, brokerBAddr string // the brokers' advertised addresses
}

func newComposeProject(t *testing.T) *composeProject {
	t.Helper()
	p := &composeProject{t: t, root: repoRoot(t)}
	// The same preference as scripts/compose.sh, so the test drives the
	// project with the tool that created it.
	if exec.Command("docker", "compose", "version").Run() == nil {
		p.compose = []string{"docker", "compose", "-p", composeProjectName}
	} else if _, err := exec.LookPath("docker-compose"); err == nil {
		p.compose = []string{"docker-compose", "-p", composeProjectName}
	} else {
		t.Fatal("compose: neither 'docker compose' nor 'docker-compose' is installed")
	}
	for _, kv := range os.Environ() {
		// A developer's compose settings must not redirect the test to
		// another file, profile or address.
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COMPOSE_") || strings.HasPrefix(k, "RUNNEL_") && k != "RUNNEL_COMPOSE_TEST" {
			continue
		}
		p.env = append(p.env, kv)
	}
	p.env = append(p.env, "COMPOSE_PROJECT_NAME="+composeProjectName)

	// A run killed before its cleanup leaves the project behind, holding
	// its network and volumes: clear it before choosing a network.
	if out, err := p.script("down"); err != nil {
		t.Logf("clearing a previous run's project: %v\n%s", err, out)
	}
	p.net = freeComposeNet(t)
	p.gateway = p.net + ".1"
	ports := freePorts(t, 7)
	p.nsPort, p.aPort, p.bPort = ports[0], ports[1], ports[2]
	p.namesrvAddr = fmt.Sprintf("127.0.0.1:%d", p.nsPort)
	p.brokerAAddr = fmt.Sprintf("%s:%d", p.gateway, p.aPort)
	p.brokerBAddr = fmt.Sprintf("%s:%d", p.gateway, p.bPort)
	p.env = append(p.env,
		"RUNNEL_NET="+p.net,
		"RUNNEL_ADVERTISE_HOST="+p.gateway,
		fmt.Sprintf("RUNNEL_NAMESRV_PORT=%d", p.nsPort),
		fmt.Sprintf("RUNNEL_BROKER_A_PORT=%d", p.aPort),
		fmt.Sprintf("RUNNEL_BROKER_B_PORT=%d", p.bPort),
		// /metrics ports too, so a project never collides with another.
		fmt.Sprintf("RUNNEL_NAMESRV_METRICS_PORT=%d", ports[3]),
		fmt.Sprintf("RUNNEL_BROKER_A_METRICS_PORT=%d", ports[4]),
		fmt.Sprintf("RUNNEL_BROKER_B_METRICS_PORT=%d", ports[5]),
		fmt.Sprintf("RUNNEL_CONSOLE_PORT=%d", ports[6]),
	)
	return p
}

// script runs scripts/compose.sh with the project's environment.
func (p *composeProject) script(args ...string) (string, error) {
	out, errOut, err := p.exec(append([]string{filepath.Join(p.root, "scripts", "compose.sh")}, args...)...)
	return out + errOut, err
}

// mustScript is script that fails the test with the output.
func (p *composeProject) mustScript(args ...string) string {
	p.t.Helper()
	out, err := p.script(args...)
	if err != nil {
		p.t.Fatalf("compose.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// run runs a compose subcommand and returns its stdout; it fails the test
// with both streams when the command fails.
func (p *composeProject) run(args ...string) string {
	p.t.Helper()
	out, errOut, err := p.exec(append(append([]string(nil), p.compose...), args...)...)
	if err != nil {
		p.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(p.compose, " "), strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// tool runs a CLI of the tools image in a container on the compose
// network (`run --rm -T`, so stdout is the CLI's alone).
func (p *composeProject) tool(service string, args ...string) string {
	p.t.Helper()
	return p.run(append([]string{"--profile", "tools", "run", "--rm", "-T", service}, args...)...)
}

func (p *composeProject) exec(argv ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), composeCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = p.root
	cmd.Env = p.env
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), composeCommandTimeout)
	}
	return out.String(), errOut.String(), err
}

// down removes the project with its volumes; after a failure it first logs
// what the containers said.
func (p *composeProject) down() {
	if p.t.Failed() {
		for _, args := range [][]string{{"ps"}, {"logs", "--no-color", "--tail", "80"}} {
			out, errOut, _ := p.exec(append(append([]string(nil), p.compose...), args...)...)
			p.t.Logf("compose %s:\n%s%s", args[0], out, errOut)
		}
	}
	if out, err := p.script("down"); err != nil {
		p.t.Errorf("compose.sh down: %v\n%s", err, out)
	}
}

// memory reports each of the project's containers' memory use.
func (p *composeProject) memory() string {
	ids, _, err := p.exec("docker", "ps", "-q", "--filter", "label=com.docker.compose.project="+composeProjectName)
	if err != nil || strings.TrimSpace(ids) == "" {
		return fmt.Sprintf("no containers (%v)", err)
	}
	args := append([]string{"docker", "stats", "--no-stream", "--format", "{{.Name}}={{.MemUsage}}"}, strings.Fields(ids)...)
	out, errOut, err := p.exec(args...)
	if err != nil {
		return fmt.Sprintf("%v: %s", err, errOut)
	}
	var parts []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, usage, _ := strings.Cut(line, "=")
		used, _, _ := strings.Cut(usage, " / ")
		parts = append(parts, strings.TrimPrefix(name, composeProjectName+"_")+" "+used)
	}
	return strings.Join(parts, ", ")
}

// imageSizes reports the runnel images' sizes in MB, as `docker images`
// counts them.
func (p *composeProject) imageSizes() string {
	var parts []string
	for _, img := range []string{"runnel/namesrv:dev", "runnel/broker:dev", "runnel/tools:dev"} {
		out, errOut, err := p.exec("docker", "image", "inspect", "--format", "{{.Size}}", img)
		if err != nil {
			p.t.Fatalf("inspect %s: %v\n%s", img, err, errOut)
		}
		var size int64
		fmt.Sscan(out, &size)
		parts = append(parts, fmt.Sprintf("%s %.1f MB", img, float64(size)/1e6))
	}
	return strings.Join(parts, ", ")
}

// freeComposeNet returns the first three octets of a 10.213.x.0/24 that
// overlaps no Docker network and no address of this host, skipping the dev
// cluster's default.
func freeComposeNet(t *testing.T) string {
	t.Helper()
	var taken []netip.Prefix
	ids, err := exec.Command("docker", "network", "ls", "-q").Output()
	if err != nil {
		t.Fatalf("docker network ls: %v", err)
	}
	if fields := strings.Fields(string(ids)); len(fields) > 0 {
		out, err := exec.Command("docker", append([]string{"network", "inspect", "--format",
			"{{range .IPAM.Config}}{{.Subnet}} {{end}}"}, fields...)...).Output()
		if err != nil {
			t.Fatalf("docker network inspect: %v", err)
		}
		for _, s := range strings.Fields(string(out)) {
			if pfx, err := netip.ParsePrefix(s); err == nil {
				taken = append(taken, pfx)
			}
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			taken = append(taken, pfx.Masked())
		}
	}
next:
	for x := 58; x < 255; x++ {
		cand := netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", x))
		for _, pfx := range taken {
			if pfx.Overlaps(cand) {
				continue next
			}
		}
		return fmt.Sprintf("10.213.%d", x)
	}
	t.Fatal("no free 10.213.x.0/24 for the compose network")
	return ""
}

// freePorts returns n distinct TCP ports that are free on every address.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen, so they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Dir(filepath.Dir(file))
}
