-- One round trip where delivery took several (issue 16): taking a lease and counting a
-- rate-limit hit are each one function call instead of a transaction of five to seven
-- statements. The semantics are those of storage/leases.py before: a transaction-level
-- advisory lock on the name serialises takers, and each statement inside a VOLATILE
-- PL/pgSQL function sees what committed before it (READ COMMITTED takes a snapshot per
-- statement), so the count taken after the lock sees every earlier taker.

-- True with the lease held (or renewed) for ttl_sec; false when lim others hold one.
CREATE FUNCTION whytree_take_lease(p_scope text, p_name text, p_holder text,
                                   lim integer, ttl_sec double precision)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_scope || ':' || p_name, 15));
    DELETE FROM leases WHERE scope = p_scope AND name = p_name AND lease_until < now();
    IF (SELECT count(*) FROM leases
        WHERE scope = p_scope AND name = p_name AND holder <> p_holder) >= lim THEN
        RETURN false;
    END IF;
    INSERT INTO leases (scope, name, holder, lease_until)
    VALUES (p_scope, p_name, p_holder, now() + make_interval(secs => ttl_sec))
    ON CONFLICT (scope, name, holder) DO UPDATE SET lease_until = EXCLUDED.lease_until;
    RETURN true;
END $$;

-- 0 with the hit p_key recorded (or already there); else seconds until one is allowed.
CREATE FUNCTION whytree_rate_hit(p_user bigint, p_key text, lim integer,
                                 window_sec double precision)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    oldest timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('rate:' || p_user::text, 16));
    DELETE FROM rate_hits WHERE user_id = p_user
        AND at < now() - make_interval(secs => window_sec);
    IF EXISTS (SELECT 1 FROM rate_hits WHERE user_id = p_user AND key = p_key) THEN
        RETURN 0;
    END IF;
    IF (SELECT count(*) FROM rate_hits WHERE user_id = p_user) >= lim THEN
        SELECT min(at) INTO oldest FROM rate_hits WHERE user_id = p_user;
        RETURN greatest(extract(epoch FROM
            oldest + make_interval(secs => window_sec) - now())::double precision, 0.001);
    END IF;
    INSERT INTO rate_hits (user_id, key) VALUES (p_user, p_key);
    RETURN 0;
END $$;
