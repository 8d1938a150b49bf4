// Command clientgo-elector competes for a coordination.k8s.io/v1 Lease with
// client-go's tools/leaderelection and a LeaseLock, the reference that
// leaderd must interoperate with.  It serves its own view on
// 127.0.0.1:PORT:
//
//	GET /leader  {"name": "<holder>", "is_leader": bool, "identity": "<me>",
//	              "lock": "leases/NS/NAME", "state": "leader|candidate|stopping",
//	              "transitions": n}
//
// in the shape of leaderd's /leader.  is_leader follows its own
// OnStartedLeading/OnStoppedLeading callbacks; name is the last holder
// OnNewLeader reported.  After losing the lease it tries again at once.
// SIGTERM/SIGINT: is_leader becomes false at once, the lease is released
// if -release-on-cancel, exit 0.
//
// -coordinated: Coordinated Leader Election as kube-controller-manager
// runs it: a LeaseCandidate from client-go's own NewCandidate (binary and
// emulation versions from -binary-version and -emulation-version,
// strategy OldestEmulationVersion) and LeaderElectionConfig.Coordinated,
// so the elector never takes the Lease itself.
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

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	namespace := flag.String("namespace", "default", "namespace of the Lease")
	name := flag.String("name", "", "name of the Lease (required)")
	id := flag.String("id", "", "identity (default: hostname_pid)")
	addr := flag.String("http", "127.0.0.1:0", "listen address for /leader")
	ld := flag.Duration("lease-duration", 15*time.Second, "lease duration")
	rd := flag.Duration("renew-deadline", 10*time.Second, "renew deadline")
	rp := flag.Duration("retry-period", 2*time.Second, "retry period")
	release := flag.Bool("release-on-cancel", true, "release the lease on SIGTERM")
	coordinated := flag.Bool("coordinated", false, "coordinated leader election (a LeaseCandidate)")
	binVer := flag.String("binary-version", "1.0.0", "the LeaseCandidate's binaryVersion")
	emuVer := flag.String("emulation-version", "", "its emulationVersion (default: -binary-version)")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	if *kubeconfig == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: clientgo-elector -kubeconfig FILE -name LEASE [options]")
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
	// JSON on the wire, as leaderd speaks: the test API server of
	// test/integration (used by make bench) takes no protobuf, and the
	// election is the same either way.
	cfg.ContentType = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatalf("client: %v", err)
	}

	st := &state{phase: "candidate"}
	lockName := fmt.Sprintf("leases/%s/%s", *namespace, *name)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/leader", func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		b, _ := json.Marshal(map[string]any{"name": st.holder, "is_leader": st.leader,
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

	if *coordinated {
		if *emuVer == "" {
			*emuVer = *binVer
		}
		cand, _, err := leaderelection.NewCandidate(cs, *namespace, *id,
			*name, *binVer, *emuVer, coordinationv1.OldestEmulationVersion)
		if err != nil {
			log.Fatalf("lease candidate: %v", err)
		}
		go cand.Run(ctx)
		log.Printf("coordinated: LeaseCandidate %s/%s (binary %s, emulation %s)",
			*namespace, *id, *binVer, *emuVer)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: *name, Namespace: *namespace},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *id},
	}
	lec := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   *ld,
		RenewDeadline:   *rd,
		RetryPeriod:     *rp,
		ReleaseOnCancel: *release,
		Name:            *name,
		Coordinated:     *coordinated,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				st.set(func(s *state) {
					if s.phase != "stopping" {
						s.leader, s.phase = true, "leader"
						s.transitions++
					}
				})
				log.Printf("became leader of lease %s/%s", *namespace, *name)
			},
			OnStoppedLeading: func() {
				st.set(func(s *state) {
					s.leader = false
					if s.phase != "stopping" {
						s.phase = "candidate"
					}
				})
				log.Printf("stopped leading lease %s/%s", *namespace, *name)
			},
			OnNewLeader: func(holder string) {
				st.set(func(s *state) { s.holder = holder })
				log.Printf("new leader of lease %s/%s: %s", *namespace, *name, holder)
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
