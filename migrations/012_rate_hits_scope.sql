-- rate_hits counts two things (issue 25): a user's questions (RATE_LIMIT_PER_MIN, scope
-- 'question') and an API key's calls (the key's own calls per minute, scope 'api_key'),
-- so the API key's limit holds across replicas as the Telegram one does. `subject` is
-- the user's id or the key's id, as the scope says.
ALTER TABLE rate_hits RENAME COLUMN user_id TO subject;
ALTER TABLE rate_hits ADD COLUMN scope text NOT NULL DEFAULT 'question';
ALTER TABLE rate_hits DROP CONSTRAINT rate_hits_pkey;
ALTER TABLE rate_hits ADD PRIMARY KEY (scope, subject, key);
DROP INDEX rate_hits_at;
CREATE INDEX rate_hits_at ON rate_hits (scope, subject, at);

DROP FUNCTION whytree_rate_hit(bigint, text, integer, double precision);

-- 0 with the hit p_key recorded (or already there); else seconds until one is allowed.
CREATE FUNCTION whytree_rate_hit(p_scope text, p_subject bigint, p_key text, lim integer,
                                 window_sec double precision)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    oldest timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(
        hashtextextended('rate:' || p_scope || ':' || p_subject::text, 16));
    DELETE FROM rate_hits WHERE scope = p_scope AND subject = p_subject
        AND at < now() - make_interval(secs => window_sec);
    IF EXISTS (SELECT 1 FROM rate_hits
               WHERE scope = p_scope AND subject = p_subject AND key = p_key) THEN
        RETURN 0;
    END IF;
    IF (SELECT count(*) FROM rate_hits WHERE scope = p_scope AND subject = p_subject) >= lim
    THEN
        SELECT min(at) INTO oldest FROM rate_hits WHERE scope = p_scope AND subject = p_subject;
        RETURN greatest(extract(epoch FROM
            oldest + make_interval(secs => window_sec) - now())::double precision, 0.001);
    END IF;
    INSERT INTO rate_hits (scope, subject, key) VALUES (p_scope, p_subject, p_key);
    RETURN 0;
END $$;
