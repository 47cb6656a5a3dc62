package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/opstatus"
)

// status is `operator status [-n NAMESPACE] [NAME]` (and, with the binary
// linked as kubectl-fairplay, `kubectl fairplay status`): the Casino's
// version, conditions, signing keys with their ages, last migration and
// ledger audit, read from the API server with the kubeconfig's credentials.
// Without NAME it shows the namespace's only Casino.
func status(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	namespace := fs.String("n", "", "namespace (default: the kubeconfig context's)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	const usage = "usage: operator status [-n NAMESPACE] [NAME]"
	if err := parseFlags(fs, args, usage, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return errors.New(usage)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if *kubeconfig != "" {
		rules.ExplicitPath = *kubeconfig
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	ns := *namespace
	if ns == "" {
		if ns, _, err = loader.Namespace(); err != nil {
			return fmt.Errorf("kubeconfig namespace: %w", err)
		}
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := casinov1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	name := fs.Arg(0)
	if name == "" {
		var list casinov1alpha1.CasinoList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("list casinos in %s: %w", ns, err)
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d Casinos in namespace %s: name one (operator status -n %s NAME)", len(list.Items), ns, ns)
		}
		name = list.Items[0].Name
	}
	casino, err := opstatus.Get(ctx, c, ns, name)
	if err != nil {
		return err
	}
	return opstatus.Write(stdout, casino, time.Now())
}
