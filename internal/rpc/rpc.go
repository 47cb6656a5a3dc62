package rpc

import (
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
)

// Handlers are every service's handler.
type Handlers struct {
	Auth     *AuthHandler
	Game     *GameHandler
	Fairness *FairnessHandler
	Admin    *AdminHandler
	Wallet   *WalletHandler
	Live     *LiveHandler
}

// Mount registers the Connect services and the /api JSON routes on mux.
// handle wraps each handler with per-route middleware (metrics labels); csrf
// wraps the /api routes with the anti-forgery check.
func Mount(mux *http.ServeMux, h Handlers, log *slog.Logger, csrf func(http.Handler) http.Handler,
	handle func(pattern string, h http.Handler) http.Handler) {
	opts := []connect.HandlerOption{
		connect.WithInterceptors(ErrorInterceptor(log), TextInterceptor()),
		// Browsers cannot send this header cross-site without a CORS
		// preflight, which is Connect's protection against request forgery.
		connect.WithRequireConnectProtocolHeader(),
		connect.WithReadMaxBytes(maxBody),
	}
	for _, svc := range []func() (string, http.Handler){
		func() (string, http.Handler) { return fairplayv1connect.NewAuthServiceHandler(h.Auth, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewGameServiceHandler(h.Game, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewFairnessServiceHandler(h.Fairness, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewAdminServiceHandler(h.Admin, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewWalletServiceHandler(h.Wallet, opts...) },
		func() (string, http.Handler) {
			path, handler := fairplayv1connect.NewLiveServiceHandler(h.Live, opts...)
			return path, liveStreamControl(handler)
		},
	} {
		path, handler := svc()
		mux.Handle(path, handle(path, handler))
	}

	routes := h.Auth.routes()
	routes = append(routes, h.Game.routes()...)
	routes = append(routes, h.Fairness.routes()...)
	routes = append(routes, h.Admin.routes()...)
	routes = append(routes, h.Wallet.routes()...)
	routes = append(routes, h.Live.routes()...)
	routes = append(routes, route{pattern: "GET /api/csrf", handler: http.HandlerFunc(csrfToken)})
	for _, r := range routes {
		mux.Handle(r.pattern, handle(r.pattern, csrf(r.handler)))
	}
	mux.Handle("/api/", handle("/api/", csrf(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeMessage(w, http.StatusNotFound, "Not found")
	}))))
}
