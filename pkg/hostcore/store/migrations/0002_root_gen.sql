-- The workspace root's generation (directory birth time where the platform
-- records one), so a workspace dir replaced by a new one that reuses the
-- freed inode number is still noticed. 0 = unknown (sessions made before).
ALTER TABLE sessions ADD COLUMN root_gen INTEGER NOT NULL DEFAULT 0;
