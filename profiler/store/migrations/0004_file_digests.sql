-- Model files' digests as the daemon last computed them, with what stat
-- said of each file read (device, inode, size, times), so that a restart
-- reads no unchanged model file again to find its sha256. entry is the
-- daemon's own JSON; a row whose files changed since is computed again.
CREATE TABLE file_digests (
    path     TEXT NOT NULL CHECK (path <> ''),
    platform TEXT NOT NULL,
    entry    TEXT NOT NULL,
    PRIMARY KEY (path, platform)
);
