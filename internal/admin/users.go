package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// Page sizes and input limits.
const (
	DefaultLimit   = 10
	MaxLimit       = 100
	MaxQueryLength = 100
	MaxNoteLength  = 200
	// MaxSearchMatches caps how many matches a search counts: a query that
	// matches a large part of a million users (a mail domain, two letters)
	// would otherwise spend seconds counting them. Past it the result says
	// so (UserPage.Capped) and reports this many; 1,000 pages of 10 is far
	// more than anyone pages through before refining the query.
	MaxSearchMatches = 10_000
)

// UserPage is one page of users. Total is the number of matching users,
// or MaxSearchMatches when Capped says that more match.
type UserPage struct {
	Users      []accounts.User
	Page       int
	TotalPages int
	Total      int64
	Capped     bool
}

// pageArgs validates page (from 1; nil means 1) and limit (1 to MaxLimit;
// nil means DefaultLimit) and returns the row offset.
func pageArgs(pageArg, limitArg *int) (page, limit int, offset int64, err error) {
	page, limit = 1, DefaultLimit
	if pageArg != nil {
		page = *pageArg
	}
	if limitArg != nil {
		limit = *limitArg
	}
	if page < 1 {
		return 0, 0, 0, ErrPageInvalid
	}
	if limit < 1 || limit > MaxLimit {
		return 0, 0, 0, ErrLimitInvalid
	}
	return page, limit, int64(page-1) * int64(limit), nil
}

func totalPages(total int64, limit int) int {
	return int(max(1, (total+int64(limit)-1)/int64(limit)))
}

// ListUsers returns a page of the live accounts, newest first (ties by id,
// so pages are stable).
func (s *Service) ListUsers(ctx context.Context, p accounts.Principal, pageArg, limitArg *int) (UserPage, error) {
	return s.SearchUsers(ctx, p, "", pageArg, limitArg)
}

// SearchUsers returns a page of the live accounts whose username or email
// contains query, case-insensitively (an empty query lists them all).
func (s *Service) SearchUsers(ctx context.Context, p accounts.Principal, query string, pageArg, limitArg *int) (UserPage, error) {
	if err := requireAdmin(p); err != nil {
		return UserPage{}, err
	}
	page, limit, offset, err := pageArgs(pageArg, limitArg)
	if err != nil {
		return UserPage{}, err
	}
	query = strings.TrimSpace(query)
	if utf8.RuneCountInString(query) > MaxQueryLength {
		return UserPage{}, ErrQueryTooLong
	}
	q := UserQuery{Offset: offset, Limit: limit}
	if query != "" {
		q.Pattern, q.CountLimit = "%"+escapeLike(query)+"%", MaxSearchMatches
		if q.Offset >= MaxSearchMatches {
			q.Offset = MaxSearchMatches + 1 // past the cap: the store counts and reads no page
		}
	}
	users, total, err := s.store.ListUsers(ctx, q)
	if err != nil {
		return UserPage{}, fmt.Errorf("list users: %w", err)
	}
	out := UserPage{Users: users, Page: page, Total: total}
	if q.CountLimit > 0 && total > q.CountLimit {
		out.Total, out.Capped = q.CountLimit, true
		if offset >= q.CountLimit {
			out.Users = []accounts.User{}
		}
	}
	out.TotalPages = totalPages(out.Total, limit)
	return out, nil
}

// escapeLike makes s match itself literally in a LIKE pattern (with the
// default escape character, backslash): usernames often contain '_'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func parseUserID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(strings.TrimSpace(s))
	if err != nil {
		return uuid.Nil, ErrUserIDInvalid
	}
	return id, nil
}

// parseAdjustment reads a balance change: a decimal number of dollars with
// at most 2 decimals (the dashboard's step is 0.01), not zero.
func parseAdjustment(s string) (money.Amount, error) {
	a, err := money.Parse(strings.TrimSpace(s))
	if errors.Is(err, money.ErrOverflow) {
		return 0, ErrAmountTooLarge
	}
	if err != nil || a%money.FromCents(1) != 0 {
		return 0, ErrAmountInvalid
	}
	if a == 0 {
		return 0, ErrAmountZero
	}
	return a, nil
}

// AdjustBalance adds amount (negative to subtract; at most 2 decimals, not 0)
// to a live user's balance. In one transaction it locks the live
// administrators (and requires the caller among them), then the user,
// refuses a result below zero, writes the admin_adjustment ledger entry
// naming the administrator, and records the change in the audit log. While
// it waits for a busy player's row it holds every administrator's row, so
// administrators' own bets and sign-ins wait too: adjustments are rare.
//
// requestID, when not empty, is a UUID the client made for this
// adjustment: an adjustment the administrator already made with it (the
// same user, amount and note) is answered with the user as they are now,
// changing nothing, and another one with it is refused.
func (s *Service) AdjustBalance(ctx context.Context, p accounts.Principal, userID, amount, note, requestID string) (accounts.User, error) {
	if err := requireAdmin(p); err != nil {
		return accounts.User{}, err
	}
	id, err := parseUserID(userID)
	if err != nil {
		return accounts.User{}, err
	}
	delta, err := parseAdjustment(amount)
	if err != nil {
		return accounts.User{}, err
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxNoteLength {
		return accounts.User{}, ErrNoteTooLong
	}
	var request uuid.UUID
	if requestID = strings.TrimSpace(requestID); requestID != "" {
		if request, err = uuid.Parse(requestID); err != nil || request == uuid.Nil {
			return accounts.User{}, ErrRequestIDInvalid
		}
	}
	var out accounts.User
	replayed := false
	err = s.store.InTx(ctx, func(tx Store) error {
		// The caller must still be a live administrator when the money
		// moves: an adjustment queued behind another on the player's row
		// passed the access check before its administrator was deleted, and
		// went through after (found by a review). The administrators are
		// locked first, in id order, as a deletion locks them, so the two
		// wait for each other and never deadlock.
		admins, err := tx.LockAdmins(ctx)
		if err != nil {
			return err
		}
		if !containsID(admins, p.UserID) {
			return accounts.ErrAdminRequired
		}
		u, err := tx.LockLiveUser(ctx, id)
		if err != nil {
			return err
		}
		if request != uuid.Nil {
			// After the lock: a second request with the id waits for the
			// first's transaction and finds its row.
			done, found, err := tx.AuditByRequest(ctx, p.UserID, request)
			if err != nil {
				return err
			}
			if found {
				if !sameAdjustment(done, id, delta, note) {
					return ErrRequestIDReused
				}
				out, replayed = u, true
				return nil
			}
		}
		next, err := u.Balance.Add(delta)
		if err != nil {
			return ErrAmountTooLarge
		}
		if next < 0 {
			return ErrBalanceNegative
		}
		if delta > 0 && next > play.MaxBalance {
			return ErrBalanceTooLarge
		}
		at := s.now()
		bal, entryID, err := tx.AdjustBalance(ctx, Adjustment{UserID: id, Delta: delta, ActorID: p.UserID, Note: note, At: at})
		if err != nil {
			return err
		}
		if _, err := tx.InsertAudit(ctx, AuditEntry{
			ActorID: p.UserID, Action: ActionAdjustBalance, TargetUserID: id, CreatedAt: at, RequestID: request,
			Before: mustJSON(map[string]any{"balance": u.Balance.String()}),
			After: mustJSON(map[string]any{"balance": bal.String(), "amount": delta.String(),
				"ledgerEntryId": entryID, "note": note}),
		}); err != nil {
			return err
		}
		u.Balance = bal
		out = u
		return nil
	})
	if err != nil {
		return accounts.User{}, fmt.Errorf("adjust balance: %w", err)
	}
	if replayed {
		s.log.InfoContext(ctx, "balance adjustment repeated, not applied again", "admin_id", p.UserID, "user_id", id,
			"request_id", request)
		return out, nil
	}
	s.log.InfoContext(ctx, "balance adjusted by admin", "admin_id", p.UserID, "user_id", id, "amount", delta.String())
	return out, nil
}

// sameAdjustment tells whether the audit entry done is the adjustment of
// user by delta with note.
func sameAdjustment(done AuditEntry, user uuid.UUID, delta money.Amount, note string) bool {
	var after struct {
		Amount string `json:"amount"`
		Note   string `json:"note"`
	}
	if done.Action != ActionAdjustBalance || done.TargetUserID != user || json.Unmarshal(done.After, &after) != nil {
		return false
	}
	// The amount as a number, not as text: the text follows money's
	// formatting, which may change between the two requests' releases.
	amount, err := money.Parse(after.Amount)
	return err == nil && amount == delta && after.Note == note
}

// Deletion is the result of DeleteUser.
type Deletion struct {
	User            accounts.User
	SessionsRevoked int
}

// DeleteUser deletes a live account (soft: users.deleted_at is set, so its
// bets, ledger entries and audit rows keep their user). In one transaction it
// revokes every session of the account, so its tokens stop working at once,
// and records the deletion in the audit log. The account's username and email
// become free for a new registration. An administrator cannot delete their
// own account, nor the last administrator.
func (s *Service) DeleteUser(ctx context.Context, p accounts.Principal, userID string) (Deletion, error) {
	if err := requireAdmin(p); err != nil {
		return Deletion{}, err
	}
	id, err := parseUserID(userID)
	if err != nil {
		return Deletion{}, err
	}
	if id == p.UserID {
		return Deletion{}, ErrDeleteSelf
	}
	var out Deletion
	err = s.store.InTx(ctx, func(tx Store) error {
		// Locking every administrator first serializes deletions, so two
		// administrators deleting each other cannot leave none.
		admins, err := tx.LockAdmins(ctx)
		if err != nil {
			return err
		}
		u, err := tx.LockLiveUser(ctx, id)
		if err != nil {
			return err
		}
		if u.IsAdmin && len(admins) <= 1 {
			return ErrDeleteLastAdmin
		}
		if !containsID(admins, p.UserID) {
			return accounts.ErrAdminRequired // the caller lost the role meanwhile
		}
		at := s.now()
		n, err := tx.SoftDeleteUser(ctx, id, at)
		if err != nil {
			return err
		}
		if _, err := tx.InsertAudit(ctx, AuditEntry{
			ActorID: p.UserID, Action: ActionDeleteUser, TargetUserID: id, CreatedAt: at,
			Before: mustJSON(map[string]any{"username": u.Username, "email": u.Email, "balance": u.Balance.String(),
				"isAdmin": u.IsAdmin, "deleted": false}),
			After: mustJSON(map[string]any{"deleted": true, "sessionsRevoked": n}),
		}); err != nil {
			return err
		}
		out = Deletion{User: u, SessionsRevoked: n}
		return nil
	})
	if err != nil {
		return Deletion{}, fmt.Errorf("delete user: %w", err)
	}
	s.log.InfoContext(ctx, "user deleted by admin", "admin_id", p.UserID, "user_id", id, "sessions_revoked", out.SessionsRevoked)
	return out, nil
}

func containsID(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func mustJSON(v map[string]any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("admin: marshal audit fields: %v", err)) // maps of strings, numbers and bools always marshal
	}
	return b
}

// AuditPage is one page of the audit log.
type AuditPage struct {
	Entries    []AuditEntry
	Page       int
	TotalPages int
}

// AuditLog returns a page of the audit log, newest first; with a userID only
// the entries about that account.
func (s *Service) AuditLog(ctx context.Context, p accounts.Principal, userID string, pageArg, limitArg *int) (AuditPage, error) {
	if err := requireAdmin(p); err != nil {
		return AuditPage{}, err
	}
	page, limit, offset, err := pageArgs(pageArg, limitArg)
	if err != nil {
		return AuditPage{}, err
	}
	var target uuid.UUID
	if strings.TrimSpace(userID) != "" {
		if target, err = parseUserID(userID); err != nil {
			return AuditPage{}, err
		}
	}
	entries, total, err := s.store.ListAudit(ctx, target, offset, limit)
	if err != nil {
		return AuditPage{}, fmt.Errorf("audit log: %w", err)
	}
	return AuditPage{Entries: entries, Page: page, TotalPages: totalPages(total, limit)}, nil
}

// UserLimits returns a player's responsible-gambling settings: limits,
// break and self-exclusion, to see. Nothing here changes them: a player's
// break or self-exclusion cannot be lifted early by anyone.
func (s *Service) UserLimits(ctx context.Context, p accounts.Principal, userID string) (limits.State, error) {
	if err := requireAdmin(p); err != nil {
		return limits.State{}, err
	}
	id, err := parseUserID(userID)
	if err != nil {
		return limits.State{}, err
	}
	st, err := s.limits.Get(ctx, id)
	if errors.Is(err, limits.ErrNoPlayer) {
		return limits.State{}, accounts.ErrUserNotFound
	}
	return st, err
}
