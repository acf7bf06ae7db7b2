import { Controller, Get, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { bodyParsingRoutesOf, MultipartBody, ParsesOwnBody } from './body-parsing-routes';

@Controller('v1/things')
class ThingsController {
  @Post()
  create(): void {}

  @MultipartBody()
  @Post('/upload')
  upload(): void {}

  @Get(':id')
  one(): void {}
}

@ParsesOwnBody()
@Controller('rpc')
class RpcController {
  @Post(':key')
  call(): void {}
}

@Controller('v1/params')
class ParamMultipartController {
  @MultipartBody()
  @Post(':id/upload')
  upload(): void {}
}

async function routesOf(...controllers: (new (...args: never[]) => unknown)[]) {
  const moduleRef = await Test.createTestingModule({ controllers }).compile();
  try {
    return bodyParsingRoutesOf(moduleRef);
  } finally {
    await moduleRef.close();
  }
}

describe('bodyParsingRoutesOf', () => {
  it('finds the multipart routes the controllers mark, by exact path', async () => {
    const routes = await routesOf(ThingsController, RpcController);
    expect(routes.isMultipart('/v1/things/upload')).toBe(true);
    expect(routes.isMultipart('/v1/things')).toBe(false);
    expect(routes.isMultipart('/v1/things/upload/more')).toBe(false);
  });

  it('finds the paths of controllers that parse their own bodies, at and under their path only', async () => {
    const routes = await routesOf(ThingsController, RpcController);
    expect(routes.parsesOwnBody('/rpc')).toBe(true);
    expect(routes.parsesOwnBody('/rpc/sk_live_x')).toBe(true);
    expect(routes.parsesOwnBody('/rpcx')).toBe(false);
    expect(routes.parsesOwnBody('/v1/things')).toBe(false);
  });

  it('refuses a multipart route with a parameter in its path', async () => {
    await expect(routesOf(ParamMultipartController)).rejects.toThrow(/needs a static path/);
  });
});
