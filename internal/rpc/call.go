package rpc

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1direct"
)

// call is one unary call as the interceptors' rules see it, whichever way it
// came: a Connect request (asInterceptor) or an /api route (invoker).
type call struct {
	procedure string // the Connect path, /fairplay.v1.GameService/PlayDice
	header    http.Header
	msg       proto.Message
	// claims is the caller's token as linesOf verified it (signature,
	// issuer, expiry; its session not looked up), for accessOf.
	claims    accounts.Principal
	hasClaims bool
}

// unaryCall runs a call; callMiddleware is one rule around it (errors,
// text, access). Each rule is written once, as a callMiddleware: Connect
// gets it as an interceptor, /api calls it directly.
type (
	unaryCall      func(ctx context.Context, c *call) (connect.AnyResponse, error)
	callMiddleware func(next unaryCall) unaryCall
)

// asInterceptor is a rule as a Connect interceptor (unary calls; streams
// check their own request).
func asInterceptor(mw callMiddleware) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			msg, _ := req.Any().(proto.Message)
			run := mw(func(ctx context.Context, _ *call) (connect.AnyResponse, error) { return next(ctx, req) })
			return run(ctx, &call{procedure: req.Spec().Procedure, header: req.Header(), msg: msg})
		}
	})
}

// invoker is the in-process call of one unary procedure (fn, generated
// from the protos by hack/direct) through rules (the first outermost, as
// connect.WithInterceptors orders them): what an /api route runs instead of
// a second HTTP request to the Connect handler. The handler gets the call's
// headers but the protocol's own (protocolHeader).
//
// Before this, /api marshalled the decoded message to protobuf, served it to
// the Connect handler as a new in-process HTTP request, and unmarshalled the
// answer: about a sixth of the server's CPU per bet (make bench's profile).
// Then it called the handler's method through reflect.Value.Call: ten
// allocations of a dice bet's ~127.
func invoker(fn fairplayv1direct.Call, rules []callMiddleware) unaryCall {
	run := unaryCall(func(ctx context.Context, c *call) (connect.AnyResponse, error) {
		return fn(ctx, c.msg, c.header, forwarded)
	})
	for i := len(rules) - 1; i >= 0; i-- {
		run = rules[i](run)
	}
	return run
}

// forwarded tells the headers an /api request passes to its handler.
func forwarded(name string) bool { return !protocolHeader(name) }
