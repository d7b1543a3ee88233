export declare const REAL_MANAGER: Readonly<{ name: '@luminati-io/luminati-proxy'; version: '1.570.247' }>;
export declare function realManagerCacheDir(): string;
export declare function realManagerPackageDir(): string;
export declare function ensureRealManagerInstalled(log?: (line: string) => void): string;
