package store

import (
	"context"
	"database/sql"
	"fmt"
)

// FileDigest is a model file's digest as the daemon keeps it across
// restarts: Entry is the daemon's own encoding of the digest and of what
// stat said of the files it read (repository.DigestCache).
type FileDigest struct {
	Path, Platform string
	Entry          []byte
}

// PutFileDigest stores d in place of the one stored for its file and
// platform.
func (s *Store) PutFileDigest(ctx context.Context, d FileDigest) error {
	op := "put digest of " + d.Path
	if d.Path == "" || len(d.Entry) == 0 {
		return fmt.Errorf("%s: %w", op, invalid("a file digest needs a path and an entry"))
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO file_digests (path, platform, entry) VALUES (?, ?, ?)
ON CONFLICT (path, platform) DO UPDATE SET entry = excluded.entry`, d.Path, d.Platform, string(d.Entry))
		return err
	})
}

// FileDigests returns every stored file digest.
func (s *Store) FileDigests(ctx context.Context) ([]FileDigest, error) {
	const op = "list file digests"
	rows, err := s.reader().QueryContext(ctx, `SELECT path, platform, entry FROM file_digests ORDER BY path, platform`)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	var out []FileDigest
	for rows.Next() {
		var d FileDigest
		var entry string
		if err := rows.Scan(&d.Path, &d.Platform, &entry); err != nil {
			return nil, wrap(op, err)
		}
		d.Entry = []byte(entry)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// DeleteFileDigest forgets the digest stored for path and platform (a file
// gone from the repository); none stored is no error.
func (s *Store) DeleteFileDigest(ctx context.Context, path, platform string) error {
	return s.write(ctx, fmt.Sprintf("delete digest of %s", path), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM file_digests WHERE path = ? AND platform = ?`, path, platform)
		return err
	})
}
