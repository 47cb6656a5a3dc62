// Package admin holds the admin dashboard's use cases: statistics about
// users, wagering and recent play, the user list and search, balance
// adjustments and account deletion, each change written to an audit log in
// the same transaction. Every use case takes the caller's Principal and
// refuses anyone who is not an administrator. It declares the Store it needs
// (implemented by internal/postgres) and the errors users see.
package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/problem"
)

// Period is the half-open time range [From, To).
type Period struct {
	From, To time.Time
}

// Figures are the bets of one game in a period: how many were placed, their
// stakes, the stakes of those already settled and what those paid out.
type Figures struct {
	Bets           int64
	Wagered        Total
	SettledWagered Total
	PaidOut        Total
}

// ByGame holds Figures by game name.
type ByGame map[string]Figures

// Adjustment is one admin balance change, written as an admin_adjustment
// ledger entry naming the administrator.
type Adjustment struct {
	UserID  uuid.UUID
	Delta   money.Amount
	ActorID uuid.UUID
	Note    string
	At      time.Time
}

// UserQuery selects a page of live users, newest first. Pattern, when not
// empty, is a LIKE pattern (already escaped, with its % wildcards) matched
// case-insensitively against the username and the email. CountLimit, when
// above 0, lets the store stop counting matches after CountLimit + 1.
type UserQuery struct {
	Pattern    string
	Offset     int64
	Limit      int
	CountLimit int64
}

// Audit actions.
const (
	ActionAdjustBalance = "adjust_balance"
	ActionDeleteUser    = "delete_user"
)

// AuditEntry is one administrator action. Before and After are JSON objects
// with the target's relevant fields.
type AuditEntry struct {
	ID int64
	// RequestID is the id the administrator's client gave the request (a
	// balance adjustment's), or uuid.Nil.
	RequestID uuid.UUID
	// ActorID is the administrator; uuid.Nil for an operator's command
	// (package accounts' Audit* actions).
	ActorID        uuid.UUID
	ActorUsername  string
	Action         string
	TargetUserID   uuid.UUID
	TargetUsername string
	Before         json.RawMessage
	After          json.RawMessage
	CreatedAt      time.Time
}

// Store persists what the admin use cases read and change. Implementations
// translate their own errors into the sentinels below.
type Store interface {
	// InTx runs fn with a Store bound to one transaction.
	InTx(ctx context.Context, fn func(Store) error) error
	// UserCounts returns the number of live users and, for each period, the
	// number of live users created in it.
	UserCounts(ctx context.Context, periods []Period) (total int64, counts []int64, err error)
	// BetFigures returns the figures of all bets by game and, for each
	// period, of the bets placed in it.
	BetFigures(ctx context.Context, periods []Period) (total ByGame, per []ByGame, err error)
	// ActivePlayers counts the distinct users who placed a bet in p.
	ActivePlayers(ctx context.Context, p Period) (int64, error)
	// ListUsers returns a page of live users and how many match in all (at
	// most CountLimit + 1 when CountLimit is set).
	ListUsers(ctx context.Context, q UserQuery) ([]accounts.User, int64, error)
	// LockLiveUser reads a live user and locks the row until the transaction
	// ends; accounts.ErrUserNotFound if there is none.
	LockLiveUser(ctx context.Context, id uuid.UUID) (accounts.User, error)
	// LockAdmins locks every live administrator's row and returns their ids.
	LockAdmins(ctx context.Context) ([]uuid.UUID, error)
	// AdjustBalance applies a balance change with its ledger entry and
	// returns the new balance and the entry's id; ErrBalanceNegative if the
	// balance would go below zero.
	AdjustBalance(ctx context.Context, a Adjustment) (money.Amount, int64, error)
	// SoftDeleteUser marks a live user deleted and revokes all their
	// sessions, returning how many it revoked.
	SoftDeleteUser(ctx context.Context, id uuid.UUID, at time.Time) (int, error)
	// InsertAudit records an action and returns its id;
	// ErrRequestIDReused when the actor's RequestID is recorded already.
	InsertAudit(ctx context.Context, e AuditEntry) (int64, error)
	// AuditByRequest finds the actor's entry with this request id.
	AuditByRequest(ctx context.Context, actor, requestID uuid.UUID) (AuditEntry, bool, error)
	// ListAudit returns a page of the audit log, newest first, optionally only
	// about one target, and how many entries match in all.
	ListAudit(ctx context.Context, target uuid.UUID, offset int64, limit int) ([]AuditEntry, int64, error)
}

// Errors users see.
var (
	ErrPageInvalid     = problem.Invalid("Page must be a whole number of at least 1")
	ErrLimitInvalid    = problem.Invalid("Limit must be between 1 and 100")
	ErrQueryTooLong    = problem.Invalid("Search query must be at most 100 characters")
	ErrUserIDInvalid   = problem.Invalid("Invalid user id")
	ErrAmountZero      = problem.Invalid("Amount cannot be 0")
	ErrAmountInvalid   = problem.Invalid("Amount must be a number with at most 2 decimal places")
	ErrAmountTooLarge  = problem.Invalid("Amount is too large")
	ErrNoteTooLong     = problem.Invalid("Note must be at most 200 characters")
	ErrBalanceNegative = problem.Invalid("Balance cannot go below 0")
	// ErrBalanceTooLarge refuses raising a balance above play.MaxBalance,
	// the most a player can bet with.
	ErrBalanceTooLarge = problem.Invalid(fmt.Sprintf("Balance cannot go above %s", play.MaxBalance))
	ErrDeleteSelf      = problem.Invalid("You cannot delete your own account")
	ErrDeleteLastAdmin = problem.Conflict("Cannot delete the last administrator")
	// ErrRequestIDInvalid refuses a request id that is not a UUID.
	ErrRequestIDInvalid = problem.Invalid("Invalid request id")
	// ErrRequestIDReused refuses a request id the administrator gave
	// another adjustment (another user, amount or note).
	ErrRequestIDReused = problem.Conflict("This request id was already used for another adjustment")
)

// Service runs the admin use cases.
type Service struct {
	store  Store
	limits *limits.Service
	log    *slog.Logger
	now    func() time.Time
}

// Options are the Service's collaborators.
type Options struct {
	Store Store
	// Limits reads players' responsible-gambling settings (which no
	// administrator can change).
	Limits *limits.Service
	Logger *slog.Logger
	// Now is the clock; time.Now when nil. Every time window is computed from
	// it (never from the database's now()), so tests can control it.
	Now func() time.Time
}

// NewService returns a Service.
func NewService(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{store: o.Store, limits: o.Limits, log: o.Logger, now: o.Now}
}

// requireAdmin refuses callers who are not administrators. The principal's
// flag is read from the database on every request (accounts.Authenticate),
// so a demotion takes effect at once.
func requireAdmin(p accounts.Principal) error {
	if !p.IsAdmin {
		return accounts.ErrAdminRequired
	}
	return nil
}

// clock is the service's now at the database's resolution (microseconds), so
// a row stamped with now falls inside the windows that end at now.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
