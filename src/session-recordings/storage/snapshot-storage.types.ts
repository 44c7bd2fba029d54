/** The rows the snapshot storage repository reads and takes (snapshot-storage.repository.ts). */

/** A chunk to move between backends: where it belongs, without its bytes. */
export interface ChunkToMove {
  id: string;
  teamId: number;
  sessionId: string;
  objectKey: string | null;
  /** Set when the object is a packed one: the chunk's byte range in it. */
  objectOffset: string | null;
  objectLength: number | null;
  /** Whether the packed range is sealed with the recording's data key. */
  encrypted: boolean;
  /** The project's recording retention in days (`chunksToPack` only). */
  retentionDays?: number;
}

/** An unpacked chunk as the packer takes it: its bytes are read in pieces of a pass (`bufferedBytes`). */
export interface UnpackedChunk {
  id: string;
  teamId: number;
  /** The project's recording retention (days), which names the packed object's prefix. */
  retentionDays: number;
  sessionId: string;
  firstTimestamp: Date;
  /** The chunk's `created_at`: its buffer row's hour (partition). */
  createdAt: Date;
  /** Bytes of its buffered data. */
  dataLength: number;
}

/** A chunk's place in its packed object and the SHA-256 (hex) of its bytes. */
export interface PackedEntry {
  id: string;
  offset: number;
  length: number;
  sha256: string;
}

/** A waiting chunk's place in its packed object, and the length of its buffered (gzip) bytes. */
export interface BufferedEntry {
  id: string;
  /** The chunk's `created_at`, which is its buffer row's. */
  createdAt: Date;
  offset: number;
  length: number;
  dataLength: number;
}

/** Where one chunk of a recording is, without its bytes (the snapshot reader's page). */
export interface ChunkLocation {
  id: string;
  firstTimestamp: Date;
  windowId: string;
  inDatabase: boolean;
  objectKey: string | null;
  objectOffset: string | null;
  objectLength: number | null;
  encrypted: boolean;
}

/** A recording's data key as stored: wrapped by the key-encryption key `kekId` names. */
export interface WrappedKeyRow {
  teamId: number;
  sessionId: string;
  wrappedKey: Buffer;
  kekId: string;
}

/** How many chunks each backend holds. */
export interface StorageCounts {
  inDatabase: number;
  inObjectStore: number;
}
