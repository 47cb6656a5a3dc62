package rpc

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1direct"
	"github.com/fairplay/fairplay/internal/routes"
)

type seedImpl struct {
	fairplayv1connect.UnimplementedFairnessServiceHandler
	got *connect.Request[fairplayv1.SetClientSeedRequest]
}

func (s *seedImpl) SetClientSeed(_ context.Context, req *connect.Request[fairplayv1.SetClientSeedRequest]) (*connect.Response[fairplayv1.SetClientSeedResponse], error) {
	s.got = req
	res := connect.NewResponse(&fairplayv1.SetClientSeedResponse{})
	res.Header().Set("X-Answer", "yes")
	return res, nil
}

// invoker calls the handler method with the message and the headers but
// the protocol's, through the rules in Connect's order (the first
// outermost); a message of another procedure is refused, not passed on.
func TestInvoker(t *testing.T) {
	impl := &seedImpl{}
	fn := fairplayv1direct.Handlers{FairnessService: impl}.Calls()[fairplayv1connect.FairnessServiceSetClientSeedProcedure]
	if fn == nil {
		t.Fatal("no direct call of FairnessService.SetClientSeed")
	}
	var order []string
	rule := func(name string) callMiddleware {
		return func(next unaryCall) unaryCall {
			return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
				order = append(order, name+" "+c.procedure)
				return next(ctx, c)
			}
		}
	}
	run := invoker(fn, []callMiddleware{rule("outer"), rule("inner")})
	res, err := run(context.Background(), &call{
		procedure: "/fairplay.v1.FairnessService/SetClientSeed",
		header:    http.Header{"Authorization": {"Bearer t"}, "Content-Type": {"application/json"}},
		msg:       &fairplayv1.SetClientSeedRequest{ClientSeed: "abc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ", "); got != "outer /fairplay.v1.FairnessService/SetClientSeed, inner /fairplay.v1.FairnessService/SetClientSeed" {
		t.Errorf("rules ran as %q", got)
	}
	if impl.got.Msg.GetClientSeed() != "abc" || impl.got.Header().Get("Authorization") != "Bearer t" ||
		impl.got.Header().Get("Content-Type") != "" {
		t.Errorf("handler got %v with headers %v", impl.got.Msg, impl.got.Header())
	}
	if res.Header().Get("X-Answer") != "yes" {
		t.Errorf("response headers %v", res.Header())
	}

	impl.got = nil
	if _, err := run(context.Background(), &call{msg: &fairplayv1.PlayDiceRequest{}}); err == nil ||
		!strings.Contains(err.Error(), "SetClientSeed takes *fairplayv1.SetClientSeedRequest, not *fairplayv1.PlayDiceRequest") || impl.got != nil {
		t.Errorf("another procedure's message: %v (handler got %v)", err, impl.got)
	}
}

// Every unary route of /api has its generated direct call, and no
// streaming one has.
func TestDirectCallsCoverTheRoutes(t *testing.T) {
	calls := fairplayv1direct.Handlers{
		AdminService:    fairplayv1connect.UnimplementedAdminServiceHandler{},
		AuthService:     fairplayv1connect.UnimplementedAuthServiceHandler{},
		FairnessService: fairplayv1connect.UnimplementedFairnessServiceHandler{},
		GameService:     fairplayv1connect.UnimplementedGameServiceHandler{},
		WalletService:   fairplayv1connect.UnimplementedWalletServiceHandler{},
	}.Calls()
	unary := 0
	for _, rt := range routes.MustAll() {
		if rt.Streaming() {
			if calls[rt.ConnectPath()] != nil {
				t.Errorf("%s streams but has a unary call", rt.ConnectPath())
			}
			continue
		}
		unary++
		if calls[rt.ConnectPath()] == nil {
			t.Errorf("%s (%s) has no direct call; run make generate", rt.Pattern(), rt.ConnectPath())
		}
	}
	if len(calls) < unary || unary == 0 {
		t.Errorf("%d direct calls for %d unary routes", len(calls), unary)
	}
}

func TestProtocolHeader(t *testing.T) {
	for k, want := range map[string]bool{
		"Content-Type": true, "content-length": true, "CONTENT-ENCODING": true, "Accept-Encoding": true,
		"Transfer-Encoding": true, "Connection": true, "TE": true, "Trailer": true, "Upgrade": true,
		"Connect-Protocol-Version": true, "connect-timeout-ms": true, "Trailer-Grpc-Status": true,
		"Authorization": false, "Cookie": false, "X-Request-Id": false, "Content": false, "Connect": false,
		"User-Agent": false, "X-Forwarded-For": false, "Te-Extra": false, "": false,
	} {
		if got := protocolHeader(k); got != want {
			t.Errorf("protocolHeader(%q) = %v, want %v", k, got, want)
		}
	}
}

// Connect runs the rules around one call, as /api does: what an outer rule
// learns (linesOf's verified claims) reaches the inner ones (accessOf), so a
// Connect call's token is verified once. Each rule had an interceptor and a
// call of its own, and accessOf verified the token again.
func TestConnectRulesShareTheCall(t *testing.T) {
	var seen []string
	outer := func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			c.hasClaims = true
			return next(ctx, c)
		}
	}
	inner := func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			seen = append(seen, fmt.Sprintf("%s claims=%t message=%T", c.procedure, c.hasClaims, c.msg))
			return next(ctx, c)
		}
	}
	impl := &seedImpl{}
	mux := http.NewServeMux()
	mux.Handle(fairplayv1connect.NewFairnessServiceHandler(impl,
		connect.WithInterceptors(rulesInterceptor([]callMiddleware{outer, inner}))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := fairplayv1connect.NewFairnessServiceClient(srv.Client(), srv.URL)
	res, err := client.SetClientSeed(context.Background(), connect.NewRequest(&fairplayv1.SetClientSeedRequest{ClientSeed: "abc"}))
	if err != nil {
		t.Fatal(err)
	}
	want := "/fairplay.v1.FairnessService/SetClientSeed claims=true message=*fairplayv1.SetClientSeedRequest"
	if len(seen) != 1 || seen[0] != want {
		t.Errorf("the inner rule saw %q, want [%q]", seen, want)
	}
	if impl.got.Msg.GetClientSeed() != "abc" || res.Header().Get("X-Answer") != "yes" {
		t.Errorf("handler got %v, answered headers %v", impl.got.Msg, res.Header())
	}
}
