package postgres

// Statement is the text of one of the statements a game action runs, by
// name, for tools that measure them on a database of their own (make
// bench-sql): "action" (one round trip from the replica's copy of the game),
// "action-same" (the same for an action that leaves the bet's status, amount
// and payout and moves no money: a reveal, a pump, a hit),
// "live-session" and "lock-game" (the locking path's first round trip) and
// "save-game" (its second).
func Statement(name string) (string, bool) {
	s, ok := map[string]string{
		"action":       actionSQL,
		"action-same":  actionSameSQL,
		"live-session": liveSessionSQL,
		"lock-game":    lockGameSQL,
		"save-game":    saveGameSQL,
	}[name]
	return s, ok
}
