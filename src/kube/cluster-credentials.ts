// What the transport needs to talk to one API server, whichever way the credentials were found.
import type { CredentialsDescription } from "./credentials.js";

/** TLS settings of the connections to the API server (read once: connections outlive credential refreshes). */
export type TlsOptions = {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly rejectUnauthorized?: boolean;
  readonly servername?: string;
};

export type Authentication = {
  /** Request headers that authenticate now (lower-case names). */
  readonly headers: Record<string, string>;
  readonly tls: TlsOptions;
};

export interface ClusterCredentials {
  /** The API server's URL, without a trailing slash. */
  readonly server: string;
  /** The namespace kubectl would default to: the context's, or in cluster the service account's. */
  readonly namespace: string | undefined;
  /** Headers and TLS as of now: token files are re-read, exec plugins re-run as they need. */
  authenticate(): Promise<Authentication>;
  /** Which user and CA, in words fit for an error line; never the secrets. */
  describe(now?: number): CredentialsDescription;
}
