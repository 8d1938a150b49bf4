package main

// The HA roles of kasbox, for make e2e-ha (test/e2e/ha/): one PKI written
// once, etcd members and kube-apiservers started one per process on it,
// and an etcd client for status and leader moves.
//
//	kasbox pki -out DIR [-users a,b]
//	kasbox etcd -name N -data DIR -client-port P -peer-port P
//	      [-advertise-peer URL] -initial-cluster n1=URL,n2=URL,...
//	kasbox apiserver -pki DIR -out DIR -port P -etcd-servers URLS
//	      [-apiserver-flag=...]
//	kasbox etcdctl -endpoints URLS status
//	kasbox etcdctl -endpoints URLS move-leader [-every 2s] [-for 60s]
//	kasbox etcdctl -endpoints URLS -to ID move-leader
//
// Every role that serves prints READY ... on stdout once it serves.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

var subcommands = map[string]func([]string) int{
	"pki":       runPKI,
	"etcd":      runEtcdMember,
	"apiserver": runAPIServer,
	"etcdctl":   runEtcdctl,
}

// The issuer every apiserver of one PKI shares, so that a service-account
// token minted by one is accepted by the other.
const haIssuer = "https://kubernetes.default.svc.cluster.local"

// runPKI writes the CA, serving certificate, service-account key pair,
// tokens.csv and pki.json (the users and their tokens) into -out.
func runPKI(args []string) int {
	fs := flag.NewFlagSet("kasbox pki", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (required)")
	users := fs.String("users", "leaderd,elector", "comma-separated least-privilege user names (besides admin)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "kasbox pki: -out DIR is required")
		return 2
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fail("%v", err)
	}
	dir, _ := filepath.Abs(*out)
	pki, err := writePKI(dir)
	if err != nil {
		return fail("pki: %v", err)
	}
	names := []string{"admin"}
	for _, n := range strings.Split(*users, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "admin" {
			names = append(names, n)
		}
	}
	inf := &info{CA: pki.caFile, WrongCA: pki.wrongCAFile, Issuer: haIssuer,
		Users: map[string]*user{}}
	// The kubeconfigs written here name no server that runs; the harness
	// writes one per apiserver from the tokens.
	if _, err := writeTokens(dir, names, "https://127.0.0.1:1", pki.caPEM, inf.Users); err != nil {
		return fail("%v", err)
	}
	b, _ := json.MarshalIndent(inf, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "pki.json"), append(b, '\n'), 0o600); err != nil {
		return fail("%v", err)
	}
	return 0
}

// runEtcdMember runs one member of a static etcd cluster until SIGTERM.
// Its peers reach it at -advertise-peer (a proxy, for partitions), which
// defaults to its own peer port.
func runEtcdMember(args []string) int {
	fs := flag.NewFlagSet("kasbox etcd", flag.ContinueOnError)
	name := fs.String("name", "", "member name (required)")
	data := fs.String("data", "", "data directory (required)")
	cport := fs.Int("client-port", 0, "client port on 127.0.0.1 (required)")
	pport := fs.Int("peer-port", 0, "peer port on 127.0.0.1 (required)")
	adv := fs.String("advertise-peer", "", "peer URL the other members dial (default: the peer port)")
	cluster := fs.String("initial-cluster", "", "name=peerURL,... of every member (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *name == "" || *data == "" || *cport == 0 || *pport == 0 || *cluster == "" {
		fmt.Fprintln(os.Stderr, "kasbox etcd: -name, -data, -client-port, -peer-port and -initial-cluster are required")
		return 2
	}
	c := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *cport)}
	p := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *pport)}
	a := p
	if *adv != "" {
		u, err := url.Parse(*adv)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kasbox etcd: -advertise-peer %q: %v\n", *adv, err)
			return 2
		}
		a = *u
	}
	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *data
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{c}, []url.URL{c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{p}, []url.URL{a}
	cfg.InitialCluster = *cluster
	cfg.InitialClusterToken = "kasbox-ha"
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fail("etcd %s: %v", *name, err)
	}
	defer e.Close()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fail("etcd %s: %v", *name, err)
	case <-sigs:
		return 0
	}
	fmt.Printf("READY %s %s %s\n", *name, e.Server.MemberID(), c.String())
	os.Stdout.Sync()
	select {
	case err := <-e.Err():
		return fail("etcd %s: %v", *name, err)
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "kasbox etcd %s: %v: stopping\n", *name, s)
	}
	return 0
}

// runAPIServer runs one kube-apiserver on the PKI of -pki and the etcd
// servers given, writes info.json into -out and prints READY URL.
func runAPIServer(args []string) int {
	fs := flag.NewFlagSet("kasbox apiserver", flag.ContinueOnError)
	pkiDir := fs.String("pki", "", "directory written by kasbox pki (required)")
	out := fs.String("out", "", "this apiserver's directory (required)")
	port := fs.Int("port", 0, "secure port on 127.0.0.1 (required)")
	etcd := fs.String("etcd-servers", "", "comma-separated etcd client URLs (required)")
	timeout := fs.Duration("ready-timeout", 180*time.Second, "give up if /readyz is not 200 within this time")
	verbosity := fs.Int("v", 0, "kube-apiserver log verbosity")
	var extra listFlag
	fs.Var(&extra, "apiserver-flag", "extra kube-apiserver flag (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *pkiDir == "" || *out == "" || *port == 0 || *etcd == "" {
		fmt.Fprintln(os.Stderr, "kasbox apiserver: -pki, -out, -port and -etcd-servers are required")
		return 2
	}
	start := time.Now()
	dir, _ := filepath.Abs(*pkiDir)
	outDir, _ := filepath.Abs(*out)
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return fail("%v", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return fail("%v", err)
	}
	pki := &pkiFiles{caFile: filepath.Join(dir, "ca.crt"),
		wrongCAFile: filepath.Join(dir, "wrong-ca.crt"),
		certFile:    filepath.Join(dir, "serving.crt"),
		keyFile:     filepath.Join(dir, "serving.key"),
		saKeyFile:   filepath.Join(dir, "sa.key"),
		saPubFile:   filepath.Join(dir, "sa.pub"), caPEM: caPEM}
	var inf info
	b, err := os.ReadFile(filepath.Join(dir, "pki.json"))
	if err == nil {
		err = json.Unmarshal(b, &inf)
	}
	if err != nil {
		return fail("%s/pki.json: %v", dir, err)
	}
	apiURL := fmt.Sprintf("https://127.0.0.1:%d", *port)
	inf.URL, inf.Port, inf.EtcdURL, inf.PID = apiURL, *port, *etcd, os.Getpid()
	cmdArgs := apiserverArgs(pki, outDir, *port, *etcd, haIssuer,
		filepath.Join(dir, "tokens.csv"), *verbosity)
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(append(cmdArgs, extra...))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "kasbox apiserver: %v: stopping\n", s)
		time.Sleep(90 * time.Second)
		fmt.Fprintln(os.Stderr, "kasbox apiserver: shutdown took over 90s, exiting")
		os.Exit(1)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cli.Run(cmd) }()
	go waitReady(ctx, &inf, outDir, caPEM, *timeout, start)
	code := <-done
	fmt.Fprintf(os.Stderr, "kasbox apiserver: exited with status %d\n", code)
	return code
}

type memberStatus struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Client string `json:"client"`
	Leader string `json:"leader"`
	Term   uint64 `json:"raft_term"`
	Error  string `json:"error,omitempty"`
}

func etcdClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints,
		DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

// statusAll asks every endpoint for its status (2 s each at most).
func statusAll(endpoints []string) []memberStatus {
	out := make([]memberStatus, 0, len(endpoints))
	for _, ep := range endpoints {
		m := memberStatus{Client: ep}
		c, err := etcdClient([]string{ep})
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			var r *clientv3.StatusResponse
			r, err = c.Status(ctx, ep)
			cancel()
			c.Close()
			if err == nil {
				m.ID = fmt.Sprintf("%x", r.Header.MemberId)
				m.Leader = fmt.Sprintf("%x", r.Leader)
				m.Term = r.RaftTerm
			}
		}
		if err != nil {
			m.Error = err.Error()
		}
		out = append(out, m)
	}
	return out
}

// runEtcdctl: "status" prints every member's status as JSON; "move-leader"
// moves the leader to the next member every -every for -for, printing one
// JSON line per move.
func runEtcdctl(args []string) int {
	fs := flag.NewFlagSet("kasbox etcdctl", flag.ContinueOnError)
	eps := fs.String("endpoints", "", "comma-separated client URLs of every member (required)")
	every := fs.Duration("every", 2*time.Second, "move-leader: time between moves")
	total := fs.Duration("for", 60*time.Second, "move-leader: how long to keep moving")
	to := fs.String("to", "", "move-leader: move once, to this member (hex id)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	endpoints := strings.Split(*eps, ",")
	if *eps == "" || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "kasbox etcdctl: -endpoints URLS and one of status, move-leader are required")
		return 2
	}
	switch fs.Arg(0) {
	case "status":
		b, _ := json.Marshal(statusAll(endpoints))
		fmt.Println(string(b))
		return 0
	case "move-leader":
		if *to != "" {
			return moveTo(endpoints, *to)
		}
		return moveLeaders(endpoints, *every, *total)
	}
	fmt.Fprintf(os.Stderr, "kasbox etcdctl: unknown command %q (status, move-leader)\n", fs.Arg(0))
	return 2
}

func moveLeaders(endpoints []string, every, total time.Duration) int {
	end := time.Now().Add(total)
	moves, failed := 0, 0
	for time.Now().Before(end) {
		t0 := time.Now()
		st := statusAll(endpoints)
		leader, from := "", ""
		for _, m := range st {
			if m.Error == "" && m.ID == m.Leader {
				leader, from = m.ID, m.Client
			}
		}
		var to memberStatus
		for i, m := range st {
			if m.ID == leader {
				to = st[(i+1)%len(st)]
			}
		}
		res := map[string]any{"t": float64(t0.UnixNano()) / 1e9, "from": leader, "to": to.ID}
		if leader == "" || to.ID == "" {
			res["error"] = "no leader"
			failed++
		} else if err := moveLeader(from, to.ID); err != nil {
			res["error"] = err.Error()
			failed++
		} else {
			moves++
		}
		res["seconds"] = time.Since(t0).Seconds()
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		time.Sleep(time.Until(t0.Add(every)))
	}
	fmt.Printf("{\"moves\": %d, \"failed\": %d}\n", moves, failed)
	return 0
}

// moveTo moves the leader to member to, unless it leads already.
func moveTo(endpoints []string, to string) int {
	for _, m := range statusAll(endpoints) {
		if m.Error == "" && m.ID == m.Leader {
			if m.ID == to {
				return 0
			}
			if err := moveLeader(m.Client, to); err != nil {
				return fail("move-leader to %s: %v", to, err)
			}
			return 0
		}
	}
	return fail("move-leader: no leader")
}

func moveLeader(endpoint, to string) error {
	var id uint64
	if _, err := fmt.Sscanf(to, "%x", &id); err != nil {
		return err
	}
	c, err := etcdClient([]string{endpoint})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.MoveLeader(ctx, id)
	return err
}
