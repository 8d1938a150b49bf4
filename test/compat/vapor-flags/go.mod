module vapor-flags

go 1.16

require k8s.io/klog v1.0.0
