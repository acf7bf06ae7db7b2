import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';
import { configSection, toBool, toInt } from './config-section';

/** The dashboard section's variables (CONTRACT.md, "Configuration (environment)" and "Dashboard"). */
class DashboardVariables {
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  DASHBOARD_URL?: string;
  @Transform(toBool) @IsBoolean() DASHBOARD_SIGNUP = false;
  @Transform(toInt) @IsInt() @Min(1) @Max(64) PASSWORD_HASH_CONCURRENCY = 2;
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  OIDC_ISSUER?: string;
  @IsOptional() @IsString() OIDC_CLIENT_ID?: string;
  @IsOptional() @IsString() OIDC_CLIENT_SECRET?: string;
}

/** The dashboard's part of `AppConfig`. */
export interface DashboardConfig {
  /**
   * Base of dashboard links (set-password, invites) from `DASHBOARD_URL`, without a trailing slash;
   * null means `{publicBaseUrl}/dashboard` (see {@link dashboardUrlOf}).
   */
  dashboardUrl: string | null;
  /** `DASHBOARD_SIGNUP=true`: anyone may create an account (plan `free`) at `/dashboard/signup`. */
  dashboardSignup: boolean;
  /** argon2 password hashes (and checks) run at once by this process (CONTRACT.md, "Dashboard"; default 2). */
  passwordHashConcurrency: number;
  /**
   * OpenID Connect sign-in to the dashboard (`OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`, all
   * three or none); users are matched by their verified email. Null when not configured.
   */
  oidc: { issuer: string; clientId: string; clientSecret: string } | null;
}

/** The dashboard section (docs/configuration.md): the three OIDC variables go together. */
export const dashboardSection = configSection({
  variables: DashboardVariables,
  read(raw, { problems }): DashboardConfig {
    const oidcSet = [raw.OIDC_ISSUER, raw.OIDC_CLIENT_ID, raw.OIDC_CLIENT_SECRET].filter(Boolean).length;
    if (oidcSet > 0 && oidcSet < 3)
      problems.push('OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: set all three to enable OpenID Connect sign-in, or none');
    return {
      dashboardUrl: raw.DASHBOARD_URL ? raw.DASHBOARD_URL.replace(/\/+$/, '') : null,
      dashboardSignup: raw.DASHBOARD_SIGNUP,
      passwordHashConcurrency: raw.PASSWORD_HASH_CONCURRENCY,
      oidc:
        oidcSet === 3
          ? { issuer: raw.OIDC_ISSUER as string, clientId: raw.OIDC_CLIENT_ID as string, clientSecret: raw.OIDC_CLIENT_SECRET as string }
          : null,
    };
  },
});

/** Base URL of the dashboard for links (CONTRACT.md, "Dashboard"): `DASHBOARD_URL` or `{PUBLIC_BASE_URL}/dashboard`. */
export function dashboardUrlOf(config: { dashboardUrl: string | null; publicBaseUrl: string }): string {
  return config.dashboardUrl ?? `${config.publicBaseUrl}/dashboard`;
}
