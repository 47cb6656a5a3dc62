package rpc

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/gen/openapi"
)

// TestOpenAPICoversMountedRoutes: every /api route Mount serves is an
// operation of the OpenAPI document, and every operation is served.
func TestOpenAPICoversMountedRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	same := func(h http.Handler) http.Handler { return h }
	mounted := Mount(http.NewServeMux(), Handlers{Auth: &AuthHandler{}, Game: &GameHandler{}, Fairness: &FairnessHandler{},
		Admin: &AdminHandler{}, Wallet: &WalletHandler{}, Live: &LiveHandler{}}, slog.Default(), same,
		func(_ string, h http.Handler) http.Handler { return h })
	if len(mounted) < 40 {
		t.Fatalf("only %d routes mounted", len(mounted))
	}
	for _, p := range mounted {
		if !documented[p] {
			t.Errorf("%s is served but not in the OpenAPI document", p)
		}
		delete(documented, p)
	}
	for p := range documented {
		t.Errorf("%s is in the OpenAPI document but not served", p)
	}
}
