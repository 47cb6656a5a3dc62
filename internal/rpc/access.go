package rpc

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/routes"
)

type principalKey struct{}

// principal returns the caller AccessInterceptor let through. A handler of
// an ACCESS_PUBLIC procedure has none (the zero Principal).
func principal(ctx context.Context) accounts.Principal {
	p, _ := ctx.Value(principalKey{}).(accounts.Principal)
	return p
}

// accessPolicies returns every procedure's (fairplay.v1.access), by Connect
// path. A procedure without one, or a stream that is not public (the
// interceptor sees unary calls only), is a programming error.
func accessPolicies() map[string]fairplayv1.Access {
	out := map[string]fairplayv1.Access{}
	for _, svc := range routes.Services() {
		for i := 0; i < svc.Methods().Len(); i++ {
			md := svc.Methods().Get(i)
			a := routes.AccessOf(md)
			if a == fairplayv1.Access_ACCESS_UNSPECIFIED {
				panic(fmt.Sprintf("rpc: %s has no (fairplay.v1.access) option", md.FullName()))
			}
			if (md.IsStreamingClient() || md.IsStreamingServer()) && a != fairplayv1.Access_ACCESS_PUBLIC {
				panic(fmt.Sprintf("rpc: stream %s must be ACCESS_PUBLIC (AccessInterceptor sees unary calls only)", md.FullName()))
			}
			out[routes.ConnectPath(md)] = a
		}
	}
	return out
}

// AccessInterceptor applies each procedure's (fairplay.v1.access) policy
// before its handler runs, and gives the handler the caller (principal).
// /api runs through the same rule (accessOf), so no handler checks a token.
func AccessInterceptor(svc *accounts.Service) connect.Interceptor {
	return asInterceptor(accessOf(svc))
}

// accessOf is AccessInterceptor's rule, for Connect and /api alike.
func accessOf(svc *accounts.Service) callMiddleware {
	policies := accessPolicies()
	return func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			var (
				p   accounts.Principal
				err error
			)
			switch a := policies[c.procedure]; a {
			case fairplayv1.Access_ACCESS_PUBLIC:
				return next(ctx, c)
			case fairplayv1.Access_ACCESS_USER:
				p, err = svc.Authenticate(ctx, bearer(c.header))
			case fairplayv1.Access_ACCESS_PLAYER:
				// The session is checked in the bet's own transaction
				// (see GameHandler.playAs).
				if c.hasClaims {
					p = c.claims
				} else {
					p, err = svc.Claims(bearer(c.header))
				}
			case fairplayv1.Access_ACCESS_ADMIN:
				// The admin use cases check the role again; this keeps a
				// player from learning anything about their input rules.
				p, err = svc.Authenticate(ctx, bearer(c.header))
				if err == nil && !p.IsAdmin {
					err = accounts.ErrAdminRequired
				}
				if err == nil {
					err = svc.AdminAllowed(p) // FAIRPLAY_ADMIN_REQUIRE_2FA
				}
			default:
				return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("no access policy for %s", c.procedure))
			}
			if err != nil {
				return nil, err
			}
			return next(context.WithValue(ctx, principalKey{}, p), c)
		}
	}
}
