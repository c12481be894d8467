package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dumpSchema returns the CREATE statements of db, tables first, each group
// ordered by name, so that two databases with the same schema dump alike.
func dumpSchema(t testing.TB, db *sql.DB) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT sql FROM sqlite_schema
WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, name`)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var stmt string
		require.NoError(t, rows.Scan(&stmt))
		b.WriteString(stmt)
		b.WriteString(";\n")
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// dumpRows returns an INSERT statement for every row of every table of db,
// tables by name and rows ordered by all their columns.
func dumpRows(t testing.TB, db *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	tables, err := queryAll(ctx, db, "list tables", func(r *sql.Rows) (string, error) {
		var n string
		return n, r.Scan(&n)
	}, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	require.NoError(t, err)
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, table))
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		require.NoError(t, rows.Close())
		order := make([]string, len(cols))
		for i := range cols {
			order[i] = strconv.Itoa(i + 1)
		}
		rows, err = db.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q ORDER BY %s`, table, strings.Join(order, ", ")))
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			lits := make([]string, len(vals))
			for i, v := range vals {
				lits[i] = sqlLiteral(t, v)
			}
			fmt.Fprintf(&b, "INSERT INTO %q VALUES(%s);\n", table, strings.Join(lits, ", "))
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return b.String()
}

// sqlLiteral writes v, as the driver returned it, as an SQL literal that
// reads back as the same value.
func sqlLiteral(t testing.TB, v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'"
	default:
		t.Fatalf("cannot dump a %T", v)
		return ""
	}
}

// dumpDatabase returns db as an SQL script: schema, then rows, in one
// transaction.
func dumpDatabase(t testing.TB, db *sql.DB, header string) string {
	return header + "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n" + dumpSchema(t, db) + dumpRows(t, db) + "COMMIT;\n"
}
