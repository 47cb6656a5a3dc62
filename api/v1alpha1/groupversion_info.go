// Package v1alpha1 holds the API of the Fairplay operator: kind Casino in
// group casino.fairplay.dev. It is a contract only (types, markers and the
// condition vocabulary); the behaviour lives in internal/controller.
//
// +kubebuilder:object:generate=true
// +groupName=casino.fairplay.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the Casino API.
	GroupVersion = schema.GroupVersion{Group: "casino.fairplay.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package in a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Casino{}, &CasinoList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
