-- What the analysis page (/t/{token}) needs beyond the tree itself.
--
-- tree_events: the reflection journal of an analysis (checkpoints, decisions,
-- plan revisions), in the order they happened.
CREATE TABLE tree_events (
    tree_id     text NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    kind        text NOT NULL,
    message     text NOT NULL DEFAULT '',
    data        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tree_id, seq)
);

-- tree_links: capability links to one tree's page. Only the SHA-256 of the token is
-- stored, so a copy of this table opens no page; a link is revoked or expires.
CREATE TABLE tree_links (
    token_hash  bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    tree_id     text NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX tree_links_tree ON tree_links (tree_id);
