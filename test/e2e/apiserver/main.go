// Command kasbox runs a real kube-apiserver (k8s.io/kubernetes, in process)
// on an embedded etcd, both on 127.0.0.1, for leaderd's end-to-end tests.
//
// It generates a CA, a serving certificate, a second unrelated CA (for
// wrong-CA tests), a service-account signing key and a static token file
// with an admin (group system:masters) and least-privilege users that have
// no rights beyond system:authenticated.  It writes a kubeconfig per user
// and info.json into -out, prints one line
//
//	READY https://127.0.0.1:PORT
//
// on stdout once /readyz answers 200 and the "default" namespace exists, and
// stops etcd and the API server cleanly on SIGTERM or SIGINT (exit 0).
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

type user struct {
	Name       string `json:"name"`
	Token      string `json:"token"`
	Groups     string `json:"groups"`
	Kubeconfig string `json:"kubeconfig"`
}

type info struct {
	URL        string           `json:"url"`
	Port       int              `json:"port"`
	EtcdURL    string           `json:"etcd_url"`
	CA         string           `json:"ca"`
	WrongCA    string           `json:"wrong_ca"`
	Issuer     string           `json:"service_account_issuer"`
	Users      map[string]*user `json:"users"`
	Version    string           `json:"kubernetes_version"`
	PID        int              `json:"pid"`
	StartupSec float64          `json:"startup_seconds"`
}

func main() {
	if len(os.Args) > 1 {
		if sub, ok := subcommands[os.Args[1]]; ok {
			os.Exit(sub(os.Args[2:]))
		}
	}
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("kasbox", flag.ContinueOnError)
	out := fs.String("out", "", "output directory for certificates, tokens, kubeconfigs and info.json (required)")
	dataDir := fs.String("data", "", "etcd data directory (default: a temporary directory, removed at exit)")
	port := fs.Int("port", 0, "secure port of kube-apiserver on 127.0.0.1 (0: a free port)")
	users := fs.String("users", "leaderd,elector,noupdate,nobody", "comma-separated least-privilege user names (besides admin)")
	timeout := fs.Duration("ready-timeout", 180*time.Second, "give up if /readyz is not 200 within this time")
	verbosity := fs.Int("v", 0, "kube-apiserver log verbosity")
	var extra listFlag
	fs.Var(&extra, "apiserver-flag", "extra kube-apiserver flag, e.g. --feature-gates=X=true (repeatable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "kasbox: -out DIR is required")
		return 2
	}
	start := time.Now()
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fail("%v", err)
	}
	outDir, _ := filepath.Abs(*out)

	tmpData := false
	if *dataDir == "" {
		d, err := os.MkdirTemp("", "kasbox-etcd-")
		if err != nil {
			return fail("%v", err)
		}
		*dataDir = d
		tmpData = true
	}
	defer func() {
		if tmpData {
			os.RemoveAll(*dataDir)
		}
	}()

	pki, err := writePKI(outDir)
	if err != nil {
		return fail("pki: %v", err)
	}

	if *port == 0 {
		if *port, err = freePort(); err != nil {
			return fail("%v", err)
		}
	}
	apiURL := fmt.Sprintf("https://127.0.0.1:%d", *port)

	// 1. Embedded etcd on two free loopback ports.
	etcd, etcdURL, err := startEtcd(*dataDir)
	if err != nil {
		return fail("etcd: %v", err)
	}
	defer func() {
		etcd.Close()
		fmt.Fprintln(os.Stderr, "kasbox: etcd stopped")
	}()

	// 2. Static tokens: admin is a superuser; the others only have what
	// system:authenticated has until a test binds a Role to them.
	inf := &info{URL: apiURL, Port: *port, EtcdURL: etcdURL, CA: pki.caFile,
		WrongCA: pki.wrongCAFile, Issuer: apiURL, Users: map[string]*user{},
		Version: version.Get().GitVersion, PID: os.Getpid()}
	names := []string{"admin"}
	for _, n := range strings.Split(*users, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "admin" {
			names = append(names, n)
		}
	}
	tokenFile, err := writeTokens(outDir, names, apiURL, pki.caPEM, inf.Users)
	if err != nil {
		return fail("%v", err)
	}

	// 3. kube-apiserver, in process.  NewAPIServerCommand installs the
	// SIGTERM/SIGINT handler (genericapiserver.SetupSignalContext): the
	// first signal shuts the server down and Execute returns.
	args := apiserverArgs(pki, outDir, *port, etcdURL, apiURL, tokenFile, *verbosity)
	args = append(args, "--endpoint-reconciler-type=none")
	args = append(args, extra...)
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)

	// A watchdog: if shutdown hangs, leave anyway.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "kasbox: %v: stopping\n", s)
		time.Sleep(60 * time.Second)
		fmt.Fprintln(os.Stderr, "kasbox: shutdown took over 60s, exiting")
		os.Exit(1)
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cli.Run(cmd) }()
	go waitReady(ctx, inf, outDir, pki.caPEM, *timeout, start)

	code := <-done
	fmt.Fprintf(os.Stderr, "kasbox: kube-apiserver exited with status %d\n", code)
	return code
}

// writeTokens writes tokens.csv (admin in system:masters, the others with
// no group) and a kubeconfig per user for server into outDir, and fills
// users; it returns the token file's path.
func writeTokens(outDir string, names []string, server string, caPEM []byte,
	users map[string]*user) (string, error) {
	var csv strings.Builder
	for _, n := range names {
		u := &user{Name: n, Token: randHex(24)}
		if n == "admin" {
			u.Groups = "system:masters"
			fmt.Fprintf(&csv, "%s,%s,uid-%s,\"%s\"\n", u.Token, n, n, u.Groups)
		} else {
			fmt.Fprintf(&csv, "%s,%s,uid-%s\n", u.Token, n, n)
		}
		u.Kubeconfig = filepath.Join(outDir, "kubeconfig-"+n)
		if err := writeKubeconfig(u.Kubeconfig, server, caPEM, n, u.Token); err != nil {
			return "", err
		}
		users[n] = u
	}
	tokenFile := filepath.Join(outDir, "tokens.csv")
	return tokenFile, os.WriteFile(tokenFile, []byte(csv.String()), 0o600)
}

// apiserverArgs are kube-apiserver's flags on 127.0.0.1:port with the PKI,
// the token file and the service-account issuer given.
func apiserverArgs(pki *pkiFiles, outDir string, port int, etcdServers, issuer,
	tokenFile string, verbosity int) []string {
	return []string{
		"--etcd-servers=" + etcdServers,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + pki.certFile,
		"--tls-private-key-file=" + pki.keyFile,
		"--cert-dir=" + filepath.Join(outDir, "certs"),
		"--token-auth-file=" + tokenFile,
		"--anonymous-auth=false",
		"--authorization-mode=RBAC,Node",
		"--service-account-issuer=" + issuer,
		"--service-account-key-file=" + pki.saPubFile,
		"--service-account-signing-key-file=" + pki.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--profiling=false",
		fmt.Sprintf("--v=%d", verbosity),
	}
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "kasbox: "+format+"\n", a...)
	return 1
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func startEtcd(dir string) (*embed.Etcd, string, error) {
	cp, err := freePort()
	if err != nil {
		return nil, "", err
	}
	pp, err := freePort()
	if err != nil {
		return nil, "", err
	}
	c := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cp)}
	p := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pp)}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{c}, []url.URL{c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{p}, []url.URL{p}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, "", err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("not ready after 60s")
	}
	return e, c.String(), nil
}

// waitReady polls /readyz and the default namespace as admin, then writes
// info.json and prints the READY line.
func waitReady(ctx context.Context, inf *info, outDir string, caPEM []byte,
	timeout time.Duration, start time.Time) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}}}
	token := inf.Users["admin"].Token
	get := func(path string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", inf.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(timeout)
	for _, path := range []string{"/readyz", "/api/v1/namespaces/default"} {
		for get(path) != 200 {
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "kasbox: %s not 200 after %v, giving up\n", path, timeout)
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	inf.StartupSec = time.Since(start).Seconds()
	b, _ := json.MarshalIndent(inf, "", "  ")
	tmp := filepath.Join(outDir, "info.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err == nil {
		os.Rename(tmp, filepath.Join(outDir, "info.json"))
	}
	fmt.Printf("READY %s\n", inf.URL)
	os.Stdout.Sync()
}
