// vapor-flags: the command-line handling of vapor-ware/k8s-elector 1.2.0
// (cmd/elector.go: klog.InitFlags(nil), its seven flag.*Var calls and
// flag.Parse, copied as they are), printing what it parsed instead of
// running.  Go's own errors and usage go to stderr as k8s-elector's do.
//
// The reference for leaderd's --compat=vapor grammar
// (lib/config/compat_vapor.c, test/unit/compat_vapor_test.c): build it
// with `go build` (it needs k8s.io/klog v1.0.0) and compare, e.g.
//
//	./vapor-flags -election x -ttl 3; echo $?
package main

import (
	"flag"
	"fmt"
	"time"

	"k8s.io/klog"
)

var (
	address    string
	id         string
	kubeconfig string
	lockType   string
	name       string
	namespace  string
	ttl        time.Duration
)

func main() {
	klog.InitFlags(nil)

	flag.StringVar(&address, "http", "", "The HTTP address (host:port) which leader state will be reported on.")
	flag.StringVar(&id, "id", "", "The ID of the election participant. If not set, the hostname, as reported by the kernel, is used.")
	flag.StringVar(&kubeconfig, "kubeconfig", "", "The kubeconfig file to use. If not set, in-cluster config will be used.")
	flag.StringVar(&lockType, "lock-type", "leases", "The type of Kubernetes object to use for the lock (leases, endpoints, configmaps)")
	flag.StringVar(&name, "election", "", "The name of the election. This is required.")
	flag.StringVar(&namespace, "namespace", "default", "The Kubernetes namespace to run the election in. If not set, elections will run in the default namespace.")
	flag.DurationVar(&ttl, "ttl", 10*time.Second, "The TTL for the election.")
	flag.Parse()

	fmt.Printf("election=%q http=%q id=%q kubeconfig=%q lock-type=%q namespace=%q ttl=%d v=%s\n",
		name, address, id, kubeconfig, lockType, namespace, int64(ttl),
		flag.Lookup("v").Value.String())
}
