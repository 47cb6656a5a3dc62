package v1alpha1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

func TestAddToSchemeRegistersCasino(t *testing.T) {
	t.Parallel()
	s := runtime.NewScheme()
	if err := casinov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []runtime.Object{&casinov1alpha1.Casino{}, &casinov1alpha1.CasinoList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0].GroupVersion() != casinov1alpha1.GroupVersion {
			t.Fatalf("%T: kinds %v, err %v", obj, gvks, err)
		}
	}
	if casinov1alpha1.GroupVersion.String() != "casino.fairplay.dev/v1alpha1" {
		t.Fatalf("group version = %s", casinov1alpha1.GroupVersion)
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	t.Parallel()
	c := &casinov1alpha1.Casino{Spec: casinov1alpha1.CasinoSpec{
		PodLabels:   map[string]string{"a": "1"},
		SigningKeys: casinov1alpha1.SigningKeysSpec{RotationInterval: &metav1.Duration{Duration: 1}},
	}}
	c.Status.KeyIDs = []string{"20260101T000000Z"}
	cp := c.DeepCopy()
	cp.Spec.PodLabels["a"] = "2"
	cp.Spec.SigningKeys.RotationInterval.Duration = 2
	cp.Status.KeyIDs[0] = "x"
	if c.Spec.PodLabels["a"] != "1" || c.Spec.SigningKeys.RotationInterval.Duration != 1 || c.Status.KeyIDs[0] != "20260101T000000Z" {
		t.Fatal("DeepCopy shares memory with the original")
	}
}
