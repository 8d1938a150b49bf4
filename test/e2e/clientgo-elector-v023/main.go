// Command clientgo-elector-v023 is clientgo-elector built with client-go
// v0.23, the last release with every resourcelock type: endpoints,
// configmaps, leases and the MultiLocks endpointsleases and
// configmapsleases (-lock-type).  It is the old Go operator, or the
// classic leader-elector sidecar, that leaderd must share a legacy lock
// with.  It serves its own view on 127.0.0.1:PORT:
//
//	GET /leader  {"name": "<holder>", "is_leader": bool, "identity": "<me>",
//	              "lock": "TYPE/NS/NAME", "state": "leader|candidate|stopping",
//	              "transitions": n}
//
// in the shape of leaderd's /leader.  is_leader follows its own
// OnStartedLeading/OnStoppedLeading callbacks; name is the last holder
// OnNewLeader reported.  After losing the lease it tries again at once.
// SIGTERM/SIGINT: is_leader becomes false at once, the lease is released
// if -release-on-cancel, exit 0.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

type state struct {
	mu          sync.Mutex
	holder      string
	leader      bool
	phase       string
	transitions int
}

func (s *state) set(f func(*state)) {
	s.mu.Lock()
	f(s)
	s.mu.Unlock()
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	namespace := flag.String("namespace", "default", "namespace of the lock")
	name := flag.String("name", "", "name of the lock object (required)")
	lockType := flag.String("lock-type", "endpoints", "endpoints, configmaps, leases, endpointsleases or configmapsleases")
	id := flag.String("id", "", "identity (default: hostname_pid)")
	addr := flag.String("http", "127.0.0.1:0", "listen address for /leader")
	ld := flag.Duration("lease-duration", 15*time.Second, "lease duration")
	rd := flag.Duration("renew-deadline", 10*time.Second, "renew deadline")
	rp := flag.Duration("retry-period", 2*time.Second, "retry period")
	release := flag.Bool("release-on-cancel", true, "release the lease on SIGTERM")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	if *kubeconfig == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: clientgo-elector-v023 -kubeconfig FILE -name NAME [-lock-type TYPE] [options]")
		os.Exit(2)
	}
	if *id == "" {
		h, _ := os.Hostname()
		*id = fmt.Sprintf("%s_%d", h, os.Getpid())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatalf("client: %v", err)
	}

	st := &state{phase: "candidate"}
	lockName := fmt.Sprintf("%s/%s/%s", *lockType, *namespace, *name)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/leader", func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		b, _ := json.Marshal(map[string]interface{}{"name": st.holder, "is_leader": st.leader,
			"identity": *id, "lock": lockName, "state": st.phase,
			"transitions": st.transitions})
		st.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
	go http.Serve(ln, mux)
	log.Printf("listening on %s", ln.Addr())

	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		st.set(func(s *state) { s.leader = false; s.phase = "stopping" })
		log.Printf("%v: stopping", s)
		cancel()
	}()

	lock, err := resourcelock.New(*lockType, *namespace, *name, cs.CoreV1(),
		cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: *id})
	if err != nil {
		log.Fatalf("lock: %v", err)
	}
	lec := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   *ld,
		RenewDeadline:   *rd,
		RetryPeriod:     *rp,
		ReleaseOnCancel: *release,
		Name:            *name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				st.set(func(s *state) {
					if s.phase != "stopping" {
						s.leader, s.phase = true, "leader"
						s.transitions++
					}
				})
				log.Printf("became leader of %s", lockName)
			},
			OnStoppedLeading: func() {
				st.set(func(s *state) {
					s.leader = false
					if s.phase != "stopping" {
						s.phase = "candidate"
					}
				})
				log.Printf("stopped leading %s", lockName)
			},
			OnNewLeader: func(holder string) {
				st.set(func(s *state) { s.holder = holder })
				log.Printf("new leader of %s: %s", lockName, holder)
			},
		},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(lec)
		if err != nil {
			log.Fatalf("leader elector: %v", err)
		}
		le.Run(ctx)
		// Run returns when leadership is lost or ctx is done.
		st.set(func(s *state) { s.leader = false })
	}
	log.Printf("exiting")
}
