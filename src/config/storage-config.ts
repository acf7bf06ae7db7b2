import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { resolve } from 'node:path';
import { configSection, toBool, toInt } from './config-section';

/** The result storage section's variables (CONTRACT.md, "Configuration (environment)"). */
class StorageVariables {
  @IsString() STORAGE_DIR = './data/files';
  @Transform(toInt) @IsInt() @Min(1) @Max(3650) RESULT_TTL_DAYS = 30;
  @IsIn(['local', 's3']) STORAGE_DRIVER: 'local' | 's3' = 'local';
  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be an S3 bucket name' }) S3_BUCKET?: string;
  @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }) S3_ENDPOINT?: string;
  @IsString() S3_REGION = 'us-east-1';
  @IsOptional() @IsString() S3_ACCESS_KEY_ID?: string;
  @IsOptional() @IsString() S3_SECRET_ACCESS_KEY?: string;
  @Transform(toBool) @IsBoolean() S3_FORCE_PATH_STYLE = false;
}

/** S3-compatible result storage (`STORAGE_DRIVER=s3`). */
export interface S3Config {
  bucket: string;
  /** e.g. `http://minio:9000`; unset for AWS S3 itself. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default credential chain (instance role, `AWS_*` variables). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which MinIO and most S3-compatible servers need. */
  forcePathStyle: boolean;
}

/** Result storage's part of `AppConfig`. */
export interface StorageConfig {
  /** Absolute path of the result file directory. */
  storageDir: string;
  resultTtlDays: number;
  storageDriver: 'local' | 's3';
  /** Set when `storageDriver` is `s3`. */
  s3: S3Config | null;
}

/** The result storage section (docs/configuration.md): a bucket is required for S3, and both S3 keys or neither. */
export const storageSection = configSection({
  variables: StorageVariables,
  read(raw, { problems }): StorageConfig {
    if (raw.STORAGE_DRIVER === 's3' && !raw.S3_BUCKET) problems.push('S3_BUCKET: required when STORAGE_DRIVER=s3');
    if (raw.STORAGE_DRIVER === 's3' && !!raw.S3_ACCESS_KEY_ID !== !!raw.S3_SECRET_ACCESS_KEY) {
      problems.push('S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: set both or neither (neither: the AWS default credential chain)');
    }
    return {
      storageDir: resolve(raw.STORAGE_DIR),
      resultTtlDays: raw.RESULT_TTL_DAYS,
      storageDriver: raw.STORAGE_DRIVER,
      s3:
        raw.STORAGE_DRIVER === 's3'
          ? {
              bucket: raw.S3_BUCKET as string,
              endpoint: raw.S3_ENDPOINT,
              region: raw.S3_REGION,
              accessKeyId: raw.S3_ACCESS_KEY_ID,
              secretAccessKey: raw.S3_SECRET_ACCESS_KEY,
              forcePathStyle: raw.S3_FORCE_PATH_STYLE,
            }
          : null,
    };
  },
});
