type Client = Readonly<{ name: string; version: string }>;
export declare const REAL_CLIENTS: Readonly<{ sdk: Client; mcp: Client; cli: Client }>;
export declare function realClientsCacheDir(): string;
export declare function realClientDir(which: 'sdk' | 'mcp' | 'cli'): string;
export declare function assertRealClientsInstalled(): void;
export declare function ensureRealClientsInstalled(log?: (line: string) => void): string;
