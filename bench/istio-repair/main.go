// Istio's own CNI repair controller (istio.io/istio/cni/pkg/repair), run the way the Istio CNI DaemonSet runs it,
// so the bench can measure cni-repair against it side by side. Nothing of the controller is rewritten here: this
// main only builds its config and client the way istio-cni's root command and repair.StartRepair do, with the
// kubeconfig and node name given on the command line (istio-cni reads them from the pod's environment).
//
//	istio-repair --kubeconfig FILE --node-name NODE
//
// Prints "synced" on stdout once the controller's pod informer has listed (the bench's ready signal).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"istio.io/istio/cni/pkg/config"
	"istio.io/istio/cni/pkg/repair"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/tools/istio-iptables/pkg/constants"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (empty: in-cluster config)")
	nodeName := flag.String("node-name", "", "the node whose pods are repaired (istio-cni: REPAIR_NODE_NAME from the downward API)")
	flag.Parse()
	if *nodeName == "" {
		fmt.Fprintln(os.Stderr, "istio-repair: --node-name is required (the Istio CNI DaemonSet always sets it)")
		os.Exit(2)
	}

	// istio-cni's defaults for its repair flags (cni/pkg/cmd/root.go), with repair-delete-pods on.
	cfg := config.RepairConfig{
		Enabled:           true,
		DeletePods:        true,
		LabelKey:          "cni.istio.io/uninitialized",
		LabelValue:        "true",
		NodeName:          *nodeName,
		SidecarAnnotation: "sidecar.istio.io/status",
		InitContainerName: "istio-validation",
		InitExitCode:      constants.ValidationErrorCode,
	}

	// As repair.StartRepair's clientSetup: client-go's defaults plus Istio's (protobuf accepted).
	restConfig, err := kube.DefaultRestConfig(*kubeconfig, "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "istio-repair: %v\n", err)
		os.Exit(1)
	}
	client, err := kube.NewClient(kube.NewClientConfigForRestConfig(restConfig), "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "istio-repair: %v\n", err)
		os.Exit(1)
	}
	controller, err := repair.NewRepairController(client, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "istio-repair: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go controller.Run(ctx.Done())
	if client.RunAndWait(ctx.Done()) {
		fmt.Println("synced")
	}
	<-ctx.Done()
}
