import { classifyAddress } from './address.js';

describe('classifyAddress (ipaddr.js ranges)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['fd00::1', 'uniqueLocal'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['192.0.2.5', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.7', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('%s is %s', (ip, range) => expect(classifyAddress(ip)).toBe(range));

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:169.254.169.254]', 'linkLocal'],
    ['::ffff:0:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('an IPv6 address carrying IPv4 is that address: %s is %s', (ip, range) => expect(classifyAddress(ip)).toBe(range));

  it('takes translation ranges whose target cannot be told as reserved', () => {
    expect(classifyAddress('2002:7f00:1::1')).toBe('reserved');
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toBe('reserved');
    expect(classifyAddress('64:ff9b:1::1')).toBe('reserved');
  });

  it('knows public addresses and refuses what is not an address', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('93.184.215.14')).toBe('public');
    expect(classifyAddress('2606:4700::1111')).toBe('public');
    expect(classifyAddress('example.com')).toBe('invalid');
  });
});
