package rpc

import (
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
)

// Handlers are every service's handler.
type Handlers struct {
	Auth *AuthHandler
}

// Mount registers the Connect services and the /api JSON routes on mux.
// handle wraps each handler with per-route middleware (metrics labels); csrf
// wraps the /api routes with the anti-forgery check.
func Mount(mux *http.ServeMux, h Handlers, log *slog.Logger, csrf func(http.Handler) http.Handler,
	handle func(pattern string, h http.Handler) http.Handler) {
	opts := []connect.HandlerOption{
		connect.WithInterceptors(ErrorInterceptor(log)),
		// Browsers cannot send this header cross-site without a CORS
		// preflight, which is Connect's protection against request forgery.
		connect.WithRequireConnectProtocolHeader(),
		connect.WithReadMaxBytes(maxBody),
	}
	path, svc := fairplayv1connect.NewAuthServiceHandler(h.Auth, opts...)
	mux.Handle(path, handle(path, svc))

	routes := h.Auth.routes()
	routes = append(routes, route{pattern: "GET /api/csrf", handler: http.HandlerFunc(csrfToken)})
	for _, r := range routes {
		mux.Handle(r.pattern, handle(r.pattern, csrf(r.handler)))
	}
	mux.Handle("/api/", handle("/api/", csrf(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeMessage(w, http.StatusNotFound, "Not found")
	}))))
}
