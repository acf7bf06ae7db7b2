import { Module } from '@nestjs/common';
import { FilesController } from './files.controller';
import { LocalDiskStorage } from './local-disk-storage';
import { ResultFilesService } from './result-files.service';
import { ResultStorage } from './result-storage';

@Module({
  controllers: [FilesController],
  providers: [{ provide: ResultStorage, useClass: LocalDiskStorage }, ResultFilesService],
  exports: [ResultFilesService],
})
export class StorageModule {}
