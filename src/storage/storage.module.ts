import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { FilesController } from './files.controller';
import { LocalDiskStorage } from './local-disk-storage';
import { ResultFilesService } from './result-files.service';
import { ResultStorage } from './result-storage';

/** Result files: the store chosen by `STORAGE_DRIVER` (`local` or `s3`) and `/files/<name>`. */
@Module({
  controllers: [FilesController],
  providers: [
    {
      provide: ResultStorage,
      inject: [APP_CONFIG],
      // The AWS SDK is loaded for the s3 driver only (docs/performance.md, "Boot").
      useFactory: async (config: AppConfig): Promise<ResultStorage> =>
        config.storageDriver === 's3' ? new (await import('./s3-storage')).S3Storage(config) : new LocalDiskStorage(config),
    },
    ResultFilesService,
  ],
  exports: [ResultFilesService],
})
export class StorageModule {}
