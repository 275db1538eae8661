-- Delivery bodies are stored compressed (issue 20): a zstd frame in
-- `body_zstd`, with `body` left empty. The intake's throughput is bound by
-- the bytes it writes, and a 28 KB webhook body compresses to about 3 KB.
-- Rows written before this migration keep their text in `body` and a NULL
-- `body_zstd`; the store reads either (`DeliveryBody::read`).
ALTER TABLE deliveries ADD COLUMN body_zstd BYTEA;
-- A frame is already compressed: TOAST keeps it in the row (MAIN) and its
-- own compression gives up at once, instead of moving a 3 KB value out of
-- line.
ALTER TABLE deliveries ALTER COLUMN body_zstd SET STORAGE MAIN;
