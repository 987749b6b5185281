-- Acting on alert reports from the chat (issue 30): silences whytree created in
-- Alertmanager and acknowledgements ("I'm on it").
--
-- alert_analyses.matchers: the labels that identify the alert group (alertname plus the
-- labels the mapping keys its analysis on; every label for an unmapped alert), the
-- equality matchers of a silence that cannot silence more than this group.
ALTER TABLE alert_analyses ADD COLUMN matchers jsonb NOT NULL DEFAULT '{}';

-- One row per silence or acknowledgement, per chat. A silence row is 'pending' while
-- Alertmanager is asked (a second press meets the unique index and creates nothing),
-- 'active' once Alertmanager gave its id, 'expired' after "Expire now", after its end,
-- or when Alertmanager no longer has it. A failed call deletes the pending row, so
-- nothing is recorded as silenced that is not.
CREATE TABLE alert_actions (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    analysis_id  bigint REFERENCES alert_analyses (id) ON DELETE CASCADE, -- NULL: /silence
    chat_id      bigint NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('silence', 'ack')),
    state        text NOT NULL DEFAULT 'active'
                   CHECK (state IN ('pending', 'active', 'expired')),
    user_id      bigint NOT NULL,
    user_name    text NOT NULL,
    silence_id   text,                        -- Alertmanager's id of the silence
    matchers     jsonb NOT NULL DEFAULT '{}', -- label -> value, equality matchers
    ends_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expired_at   timestamptz
);
CREATE UNIQUE INDEX alert_actions_one_ack ON alert_actions (analysis_id, chat_id)
    WHERE kind = 'ack';
CREATE UNIQUE INDEX alert_actions_one_silence ON alert_actions (analysis_id, chat_id)
    WHERE kind = 'silence' AND state IN ('pending', 'active') AND analysis_id IS NOT NULL;
CREATE INDEX alert_actions_chat ON alert_actions (chat_id, created_at)
    WHERE state <> 'expired';
